import { inboxTable } from '@holdfast/inbox';
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tableName, type SqlClient, statement } from '@holdfast/core/kit';
import { forkTs, waitForMessage, waitUntil, type TestDatabase } from '@holdfast/testing';
import type { simbaTerms } from '../../../tools/history/check';
import { readHistory, type SimbaGrant, type SimbaRelease } from '../../../tools/history/history';

const WORKER = join(__dirname, '..', 'workers', 'rolling-app.worker.ts');
const BOOT_BOUND = 120_000;
/** About how often the load calls accept and the failover method (each on a random replica in service). */
const ACCEPT_EVERY_MS = 25;
const FAILOVER_EVERY_MS = 50;
const KEYS = ['a', 'b', 'c', 'd', 'e'];
/** Nest's ConsoleLogger line at ERROR level: `[Nest] <pid>  - <date>   ERROR [Context] ...`. */
const NEST_ERROR_LINE = /^\[Nest\]\s+\d+\s+-\s.*?\bERROR\b/;

export const LEADER_MUTEX = 'deploy-leader';

export interface Replica {
  name: string;
  child: ChildProcess;
  /** Lines of stdout and stderr. */
  output: string[];
  /** Calls sent and not answered yet. */
  pending: number;
  inService: boolean;
}

/** One run of the leader's job: the process, its fencing token and the database time. */
export interface Job {
  proc: string;
  token: number;
  at: number;
}

/** One leader-job write to the fenced ledger: the token it carried, when it was sent, what came of it. */
export interface FencedWrite {
  proc: string;
  token: number;
  sentAt: number;
  at: number;
  accepted?: boolean;
  error?: string;
}

/** The user's own table the leader job writes through `fenced()` (replicas started with FENCED_WORK_MS). */
export const LEDGER_TABLE = 'deploy_ledger';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Replicas of an ordinary Holdfast app (test/deploy/workers/rolling-app.worker.ts: a Simba leader
 * job, an inbox handler, a failover method) on one database, and the load a user's traffic puts
 * on them: accepts with unique ids, and failover calls whose upstream fails every other time for a
 * key that had a fresh answer a while ago. Every replica writes to one shared history.
 */
export class AppReplicas {
  readonly replicas: Replica[] = [];
  readonly failures: string[] = [];
  readonly historyFile: string;
  readonly jobsFile: string;
  readonly shutdownFile: string;
  accepts = 0;
  failoverCalls = 0;
  staleAnswers = 0;
  private started = 0;
  private loading = false;
  private loops: Promise<void>[] = [];
  /** When each key first had a fresh answer (the store holds a value from then on). */
  private readonly lastFresh = new Map<string, number>();
  private readonly keyOf = new Map<number, string>();

  constructor(
    private readonly db: TestDatabase,
    private readonly prefix: string,
    dir: string,
    private readonly standbyPoll: number,
    private readonly sqliteFile = '',
  ) {
    this.historyFile = join(dir, 'history.jsonl');
    this.jobsFile = join(dir, 'jobs.jsonl');
    this.shutdownFile = `${this.jobsFile}.shutdown`;
    writeFileSync(this.historyFile, '');
    writeFileSync(this.jobsFile, '');
  }

  /**
   * Forks one more replica (`env` is added to the test's own environment). `launch` replaces how
   * node is started (a network namespace's `ip netns exec`; its execArgv loads the TypeScript hook).
   */
  start(env: NodeJS.ProcessEnv = {}, launch?: { execPath: string; execArgv: string[] }): Replica {
    const name = `r${++this.started}`;
    const args = [
      this.db,
      this.prefix,
      this.historyFile,
      this.jobsFile,
      name,
      String(this.standbyPoll),
      this.sqliteFile,
    ];
    const options = {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'] as ('ignore' | 'pipe' | 'ipc')[],
      env: { ...process.env, NO_COLOR: '1', ...env },
    };
    const child = launch ? fork(WORKER, args, { ...options, ...launch }) : forkTs(WORKER, args, options);
    const replica: Replica = { name, child, output: [], pending: 0, inService: false };
    for (const stream of [child.stdout!, child.stderr!]) {
      let rest = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        const lines = (rest + chunk).split('\n');
        rest = lines.pop()!;
        for (const line of lines) replica.output.push(line);
      });
      stream.on('end', () => rest && replica.output.push(rest));
    }
    child.on('message', (m: { t: string; id?: string; seq?: number; fresh?: boolean; error?: string }) =>
      this.answered(replica, m),
    );
    this.replicas.push(replica);
    return replica;
  }

  /** Waits until the replica has booted, then puts it in service. */
  async ready(replica: Replica): Promise<void> {
    const m = await waitForMessage<{ t: string; error?: string }>(
      replica.child,
      (x) => x.t === 'ready' || x.t === 'failed',
      BOOT_BOUND,
    );
    if (m.t !== 'ready') throw new Error(`${replica.name} failed to boot: ${m.error}`);
    replica.inService = true;
  }

  /**
   * Puts a replica back in service once it is ready again, as a readiness probe would: its
   * failover health is up (the store answers and calls use it again).
   */
  async backInService(replica: Replica, timeoutMs = 60_000): Promise<void> {
    await waitUntil(
      async () => {
        const reply = waitForMessage<{ t: string; ready: boolean }>(
          replica.child,
          (m) => m.t === 'readiness',
          5_000,
        );
        replica.child.send({ t: 'readiness' });
        return (await reply).ready;
      },
      { timeout: timeoutMs, message: `${replica.name} to be ready again` },
    );
    replica.inService = true;
  }

  /** Starts the load; `stopLoad()` ends it. */
  startLoad(): void {
    this.loading = true;
    let nextId = 0;
    let nextSeq = 0;
    const accept = async () => {
      while (this.loading) {
        const r = this.pick();
        if (r) {
          r.pending++;
          r.child.send({ t: 'accept', id: `m-${++nextId}` });
        }
        await sleep(ACCEPT_EVERY_MS);
      }
    };
    const failover = async () => {
      while (this.loading) {
        const r = this.pick();
        if (r) {
          const seq = ++nextSeq;
          const key = KEYS[seq % KEYS.length];
          const fresh = this.lastFresh.get(key);
          const fail = seq % 2 === 0 && fresh !== undefined && Date.now() - fresh > 1_000;
          this.keyOf.set(seq, key);
          r.pending++;
          r.child.send({ t: 'failover', seq, key, fail });
        }
        await sleep(FAILOVER_EVERY_MS);
      }
    };
    this.loops = [accept(), failover()];
  }

  async stopLoad(): Promise<void> {
    this.loading = false;
    await Promise.all(this.loops);
  }

  /**
   * Stops the load, waits for every call sent to a replica in service to be answered and for the
   * inbox to empty (up to a minute: what is left is not a failure by itself, the history shows
   * it as lost or not), and returns how many messages are left in the table.
   */
  async finishLoad(sql: SqlClient, prefix: string): Promise<number> {
    await this.stopLoad();
    await waitUntil(() => this.replicas.every((r) => !r.inService || r.pending === 0), {
      timeout: 60_000,
      message: 'every call to be answered',
    });
    const table = tableName(prefix, inboxTable());
    const left = async () =>
      Number((await sql.query<{ c: unknown }>(statement(`SELECT COUNT(*) AS c FROM ${table}`)))[0].c);
    await waitUntil(async () => (await left()) === 0, {
      timeout: 60_000,
      message: 'the inbox to be empty',
    }).catch(() => undefined);
    return left();
  }

  /**
   * The leader job's runs outside their process's terms (its fencing token and the database
   * time), with 250 ms of clock-estimate tolerance: none may be.
   */
  strayJobs(terms: ReturnType<typeof simbaTerms>['terms']): Job[] {
    return this.jobs().filter(
      (job) =>
        !terms.some(
          (t) =>
            t.proc === job.proc &&
            t.tokens.some((token) => Number(token) === job.token) &&
            job.at >= t.start - 250 &&
            job.at <= t.end + 250,
        ),
    );
  }

  /** A live replica in service, at random. */
  pick(): Replica | undefined {
    const live = this.replicas.filter((r) => r.inService && r.child.connected);
    return live[Math.floor(Math.random() * live.length)];
  }

  /** How far the replica's wall clock (Date.now()) is from the real time, in ms. */
  async clockOffset(replica: Replica): Promise<number> {
    const reply = waitForMessage<{ t: string; wall: number; real: number }>(
      replica.child,
      (m) => m.t === 'clock',
      10_000,
    );
    replica.child.send({ t: 'clock' });
    const { wall, real } = await reply;
    return wall - real;
  }

  /** Replicas whose process has not ended. */
  alive(): Replica[] {
    return this.replicas.filter((r) => r.child.exitCode === null && r.child.signalCode === null);
  }

  /** Makes the ledger table with its one row; `dropLedger` removes it. */
  async createLedger(sql: SqlClient): Promise<void> {
    const table = tableName(this.prefix, LEDGER_TABLE);
    await sql.execute(
      statement(
        `CREATE TABLE ${table} (id VARCHAR(32) NOT NULL PRIMARY KEY, writer VARCHAR(16) NOT NULL, fence BIGINT NULL)`,
      ),
    );
    await sql.execute(statement(`INSERT INTO ${table} (id, writer, fence) VALUES ('ledger', '', NULL)`));
  }

  async dropLedger(sql: SqlClient): Promise<void> {
    await sql
      .execute(statement(`DROP TABLE IF EXISTS ${tableName(this.prefix, LEDGER_TABLE)}`))
      .catch(() => undefined);
  }

  /** The ledger's stored fence: the token of the last accepted write. */
  async ledgerFence(sql: SqlClient): Promise<number | null> {
    const rows = await sql.query<{ fence: unknown }>(
      statement(`SELECT fence FROM ${tableName(this.prefix, LEDGER_TABLE)} WHERE id = 'ledger'`),
    );
    return rows[0]?.fence === null || rows[0]?.fence === undefined ? null : Number(rows[0].fence);
  }

  /** Every fenced write the leader jobs made, in the order they were recorded. */
  fencedWrites(): FencedWrite[] {
    const file = `${this.jobsFile}.fenced`;
    return existsSync(file)
      ? readFileSync(file, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as FencedWrite)
      : [];
  }

  jobs(): Job[] {
    return existsSync(this.jobsFile)
      ? readFileSync(this.jobsFile, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Job)
      : [];
  }

  grants(): ((SimbaGrant | SimbaRelease) & { line: number })[] {
    return readHistory(this.historyFile).entries.filter(
      (e): e is (SimbaGrant | SimbaRelease) & { line: number } => e.kind === 'simba',
    );
  }

  /** The process that holds the mutex by the history (its last acquire not followed by its release). */
  leader(): string | undefined {
    let owner: string | undefined;
    for (const e of this.grants().sort((a, b) => a.line - b.line)) {
      if (e.op === 'acquire') owner = e.proc;
      else if (e.op === 'release' && e.proc === owner) owner = undefined;
    }
    return owner;
  }

  /** What each replica's last shutdown hook wrote: the signal, its inbox SQL retries, handlers running. */
  shutdowns(): Map<string, { signal?: string; inboxRetries: number; runningAtShutdown?: number }> {
    return new Map(
      (existsSync(this.shutdownFile)
        ? readFileSync(this.shutdownFile, 'utf8').split('\n').filter(Boolean)
        : []
      ).map((l) => {
        const { proc, ...rest } = JSON.parse(l) as {
          proc: string;
          signal?: string;
          inboxRetries: number;
          runningAtShutdown?: number;
        };
        return [proc, rest];
      }),
    );
  }

  /** Every replica's output lines, prefixed with its name. */
  output(): string[] {
    return this.replicas.flatMap((r) => r.output.map((line) => `${r.name}: ${line}`));
  }

  /** The Nest ERROR lines in every replica's output. */
  errorLines(): string[] {
    return this.output().filter((l) => NEST_ERROR_LINE.test(l.slice(l.indexOf(': ') + 2)));
  }

  warnLines(): string[] {
    return this.output().filter((l) => /\bWARN\b/.test(l));
  }

  private answered(
    replica: Replica,
    m: { t: string; id?: string; seq?: number; fresh?: boolean; error?: string },
  ): void {
    if (m.t === 'accept-done' || m.t === 'failover-done') replica.pending--;
    if (m.t === 'accept-done') {
      if (m.error) this.failures.push(`${replica.name} accept ${m.id}: ${m.error}`);
      else this.accepts++;
    } else if (m.t === 'failover-done') {
      if (m.error) this.failures.push(`${replica.name} failover call ${m.seq}: ${m.error}`);
      else {
        this.failoverCalls++;
        const key = this.keyOf.get(m.seq!)!;
        if (!m.fresh) this.staleAnswers++;
        else if (!this.lastFresh.has(key)) this.lastFresh.set(key, Date.now());
      }
    }
  }
}
