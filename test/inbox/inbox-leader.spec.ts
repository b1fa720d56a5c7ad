import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { Test } from '@nestjs/testing';
import {
  createTestDataSource,
  forkTs,
  SchemaManager,
  sqlClientFor,
  tempSqliteFile,
  testDatabases,
  uniqueTablePrefix,
  waitForExit,
  waitForMessage,
} from '@holdfast/core';
import { COR_MESSAGE_TABLE, InboxModule, MessageAcceptor } from '@holdfast/inbox';

const WORKER = join(__dirname, 'workers', 'inbox-worker.ts');
const MESSAGES = 2_000;

/**
 * Leader mode across processes on every database (SQLite's only mode): two nodes, only the Simba
 * mutex owner delivers; the owner is SIGKILLed mid-batch and a standby takes over.
 */
describe('inbox leader mode across processes', () => {
  it.each(testDatabases())(
    '[%s] one node delivers at a time and a standby finishes after the leader is killed',
    async (db) => {
      const sqliteFile = db === 'sqlite' ? tempSqliteFile('inbox-leader') : undefined;
      const dataSource = await createTestDataSource(db, { sqliteFile });
      const sql = sqlClientFor(dataSource);
      const prefix = uniqueTablePrefix(`inbox_leader_${db}`);
      const table = `${prefix}COR_MESSAGE`;
      const workers = new Set<ChildProcess>();
      try {
        await new SchemaManager(sql).apply(COR_MESSAGE_TABLE, prefix, 'create');
        const app = await Test.createTestingModule({
          imports: [
            InboxModule.forRoot({
              dataSource,
              tablePrefix: prefix,
              schema: 'check',
              deliver: false,
              cluster: 'leader',
            }),
          ],
        })
          .compile()
          .then((m) => m.init());
        const ids = (
          await app
            .get(MessageAcceptor)
            .acceptAll(
              Array.from({ length: MESSAGES }, (_, i) => ({
                type: { namespace: 'crash', name: 'item' },
                payload: { i },
              })),
            )
        ).map((r) => r.id);
        await app.close();

        const deliveredBy = new Map<string, number[]>();
        const killed = new Set<number>();
        const spawn = (): ChildProcess => {
          const child = forkTs(WORKER, [db, prefix, '3000', 'leader', sqliteFile ?? '']);
          workers.add(child);
          child.on('exit', () => workers.delete(child));
          child.on('message', (m: { t: string; id?: string; pid?: number }) => {
            if (m.t !== 'delivered' || !m.id) return;
            deliveredBy.set(m.id, [...(deliveredBy.get(m.id) ?? []), m.pid!]);
            if (!killed.size && deliveredBy.size >= MESSAGES / 4) {
              killed.add(child.pid!);
              child.kill('SIGKILL'); // mid-batch: it just reported a message it has not committed
              spawn();
            }
          });
          return child;
        };
        const first = [spawn(), spawn()];
        await Promise.all(first.map((c) => waitForMessage(c, (m: { t: string }) => m.t === 'ready', 60_000)));

        const deadline = Date.now() + 90_000;
        let remaining = -1;
        while (Date.now() < deadline) {
          remaining = Number((await sql.query<{ c: unknown }>(`SELECT COUNT(*) AS c FROM ${table}`))[0].c);
          if (remaining === 0 && deliveredBy.size === MESSAGES) break;
          await new Promise((r) => setTimeout(r, 250));
        }
        const deliveries = [...deliveredBy.values()].flat();
        const livePids = new Set(deliveries.filter((pid) => !killed.has(pid)));
        console.log(
          `[inbox leader ${db}] ${MESSAGES} messages, 2 nodes + 1 replacement, 1 SIGKILL: ` +
            `${deliveredBy.size} distinct ids, ${deliveries.length - deliveredBy.size} duplicate deliveries, ` +
            `${livePids.size} surviving node(s) delivered, ${remaining} rows left`,
        );
        expect(killed.size).toBe(1);
        expect(remaining).toBe(0);
        expect(ids.filter((id) => !deliveredBy.has(id))).toEqual([]);
        // Only the leader delivers: after the kill exactly one surviving node took over.
        expect(livePids.size).toBe(1);
      } finally {
        for (const child of [...workers]) child.send?.({ t: 'stop' });
        await Promise.all([...workers].map((c) => waitForExit(c, 10_000)));
        await sql.execute(`DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
        await sql.execute(`DROP TABLE IF EXISTS ${prefix}simba_mutex`).catch(() => undefined);
        await dataSource.destroy();
      }
    },
    150_000,
  );
});
