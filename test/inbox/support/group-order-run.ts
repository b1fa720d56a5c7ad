import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { Test } from '@nestjs/testing';
import { SchemaManager, sqlClientFor, statement } from '@holdfast/core/kit';
import {
  createTestDataSource,
  forkTs,
  tempSqliteFile,
  uniqueTablePrefix,
  waitForExit,
  waitForMessage,
  type TestDatabase,
} from '@holdfast/testing';
import { InboxModule, MessageAcceptor, type InboxMessage, INBOX_TABLES } from '@holdfast/inbox';

const WORKER = join(__dirname, '..', 'workers', 'group-worker.ts');

export interface GroupOrderRun {
  groups: number;
  perGroup: number;
  workers: number;
  kills: number;
  visibilityMs: number;
}

interface Event {
  t: 'start' | 'done' | 'failed';
  id: string;
  g: string;
  k: number;
  pid: number;
  at: number;
}

/**
 * Strict order per group with real processes: `groups` × `perGroup` messages (groups
 * interleaved, half accepted before the workers start and half while they run), `workers` nodes
 * (competing on PostgreSQL/MariaDB, leader mode on SQLite), 20% of first attempts failing, and
 * `kills` SIGKILLs of a node right after it reported a success (each replaced). Checks, for every
 * group, that no message started before the one accepted before it had succeeded (so the first
 * successes come in acceptance order), that every message succeeded, and that groups ran at
 * the same time. Returns a one-line summary.
 */
export async function runGroupOrder(db: TestDatabase, run: GroupOrderRun): Promise<string> {
  const sqliteFile = db === 'sqlite' ? tempSqliteFile('inbox-group') : undefined;
  const mode = db === 'sqlite' ? 'leader' : 'competing';
  const dataSource = await createTestDataSource(db, { sqliteFile });
  const sql = sqlClientFor(dataSource);
  const prefix = uniqueTablePrefix(`inbox_group_${db}`);
  const table = `${prefix}COR_MESSAGE`;
  const workers = new Set<ChildProcess>();
  const total = run.groups * run.perGroup;
  const acceptor = await Test.createTestingModule({
    imports: [
      InboxModule.forRoot({
        dataSource,
        tablePrefix: prefix,
        schema: 'create',
        deliver: false,
        cluster: mode,
        groupBy: (m: InboxMessage) => (m.payload as { g: string }).g,
      }),
    ],
  })
    .compile()
    .then((m) => m.init());
  try {
    await new SchemaManager(sql).apply(INBOX_TABLES.lease, prefix, 'create');
    // Acceptance order: the index i (ids sort the same way), groups interleaved.
    const messages = Array.from({ length: total }, (_, i) => ({
      id: `m${String(i).padStart(7, '0')}`,
      type: { namespace: 'group', name: 'item' },
      payload: { g: `g${String(i % run.groups).padStart(3, '0')}`, k: Math.floor(i / run.groups), i },
    }));
    const accept = acceptor.get(MessageAcceptor);
    await accept.acceptAll(messages.slice(0, total / 2));

    const events: Event[] = [];
    const killed = new Set<number>();
    let done = 0;
    let kills = 0;
    const killEvery = Math.floor(total / (run.kills + 2));
    let nextKillAt = killEvery;
    const spawn = (): ChildProcess => {
      const child = forkTs(WORKER, [db, prefix, String(run.visibilityMs), mode, sqliteFile ?? '']);
      workers.add(child);
      child.on('exit', () => workers.delete(child));
      child.on('message', (m: Event | { t: 'ready' }) => {
        // (a killed node's reports were all sent before it died: they count)
        if (m.t === 'ready') return;
        events.push(m as Event);
        if (m.t !== 'done') return;
        done++;
        if (kills < run.kills && done >= nextKillAt && child.exitCode === null && !child.killed) {
          killed.add(child.pid!);
          child.kill('SIGKILL'); // it just reported a success it has not deleted yet
          kills++;
          nextKillAt = done + killEvery;
          spawn();
        }
      });
      return child;
    };
    const first = Array.from({ length: run.workers }, spawn);
    await Promise.all(first.map((c) => waitForMessage(c, (m: { t: string }) => m.t === 'ready', 60_000)));
    await accept.acceptAll(messages.slice(total / 2));

    const firstDone = new Map<string, Event>();
    const deadline = Date.now() + 150_000;
    let remaining = -1;
    while (Date.now() < deadline) {
      for (const e of events) if (e.t === 'done' && !firstDone.has(e.id)) firstDone.set(e.id, e);
      remaining = Number(
        (await sql.query<{ c: unknown }>(statement(`SELECT COUNT(*) AS c FROM ${table}`)))[0].c,
      );
      if (remaining === 0 && firstDone.size === total) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    for (const e of events) if (e.t === 'done' && !firstDone.has(e.id)) firstDone.set(e.id, e);

    // Per group: the k-th message never started before the (k-1)-th had succeeded.
    const violations: string[] = [];
    const byGroup = new Map<string, Event[]>();
    for (const e of events) byGroup.set(e.g, [...(byGroup.get(e.g) ?? []), e]);
    for (const [g, list] of byGroup) {
      const doneAt = new Map<number, number>();
      for (const e of list) if (e.t === 'done' && !doneAt.has(e.k)) doneAt.set(e.k, e.at);
      const firstStart = new Map<number, number>();
      for (const e of list)
        if (e.t === 'start') firstStart.set(e.k, Math.min(firstStart.get(e.k) ?? Infinity, e.at));
      for (const [k, at] of firstStart) {
        if (k === 0) continue;
        const before = doneAt.get(k - 1);
        if (before === undefined || at < before)
          violations.push(`${g}: #${k} started before #${k - 1} succeeded`);
      }
      const order = [...doneAt.entries()].sort((a, b) => a[1] - b[1] || a[0] - b[0]).map(([k]) => k);
      if (order.some((k, i) => k !== i)) violations.push(`${g}: first successes in order ${order.join(',')}`);
    }

    // Parallelism: the most groups with a handler running at the same moment, and which nodes ran.
    const open = new Map<string, number>();
    const points: { at: number; g: string; d: number }[] = [];
    for (const e of events) {
      if (e.t === 'start') open.set(`${e.pid}:${e.id}`, e.at);
      else {
        const start = open.get(`${e.pid}:${e.id}`);
        if (start !== undefined) {
          points.push({ at: start, g: e.g, d: 1 }, { at: e.at, g: e.g, d: -1 });
          open.delete(`${e.pid}:${e.id}`);
        }
      }
    }
    points.sort((a, b) => a.at - b.at || a.d - b.d);
    const running = new Map<string, number>();
    let maxGroups = 0;
    for (const p of points) {
      running.set(p.g, (running.get(p.g) ?? 0) + p.d);
      if (!running.get(p.g)) running.delete(p.g);
      maxGroups = Math.max(maxGroups, running.size);
    }
    const pids = new Set(events.filter((e) => e.t === 'done').map((e) => e.pid));
    const successes = events.filter((e) => e.t === 'done').length;
    const failures = events.filter((e) => e.t === 'failed').length;
    const summary =
      `[inbox group order ${db}, ${mode}] ${run.groups} groups x ${run.perGroup}, ${run.workers} nodes, ${kills} SIGKILLs: ` +
      `${firstDone.size}/${total} handled, ${failures} failed first attempts, ${successes - firstDone.size} duplicate successes, ` +
      `up to ${maxGroups} groups running at once, ${pids.size} node(s) delivered, ${remaining} rows left, ` +
      `${violations.length} order violations`;
    console.log(summary);
    expect(kills).toBe(run.kills);
    expect(violations).toEqual([]);
    expect(remaining).toBe(0);
    expect(firstDone.size).toBe(total);
    // 20% of the messages fail their first attempt (i % 5 === 2), and are then handled.
    expect(new Set(events.filter((e) => e.t === 'failed').map((e) => e.id)).size).toBe(total / 5);
    expect(maxGroups).toBeGreaterThanOrEqual(2);
    if (mode === 'competing') expect(pids.size).toBeGreaterThanOrEqual(2);
    // The group rows went with their messages.
    const groupRows = Number(
      (
        await sql.query<{ c: unknown }>(statement(`SELECT COUNT(*) AS c FROM ${prefix}HOLDFAST_INBOX_GROUP`))
      )[0].c,
    );
    expect(groupRows).toBe(0);
    return summary;
  } finally {
    for (const child of [...workers]) child.send?.({ t: 'stop' });
    await Promise.all([...workers].map((c) => waitForExit(c, 10_000)));
    await acceptor.close();
    for (const name of ['COR_MESSAGE', 'HOLDFAST_INBOX_GROUP', 'HOLDFAST_INBOX_LEASE', 'simba_mutex'])
      await sql.execute(statement(`DROP TABLE IF EXISTS ${prefix}${name}`)).catch(() => undefined);
    await dataSource.destroy();
  }
}
