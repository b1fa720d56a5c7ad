/**
 * Holdfast beside the Java systems it shares tables with, each played by a small Java program in
 * test/interop/java (plain JDBC, compiled once per run):
 * - failover keys: the FAILOVER_KEY Holdfast stores through its real `@Failover` path equals the
 *   key Société Générale's failover library computes (DefaultKeyGenerator +
 *   `UUID.nameUUIDFromBytes`) for every argument vector Java can express (every database);
 * - Simba: Java contenders running Simba's SQL and Holdfast processes share one `simba_mutex`
 *   made by Simba's DDL, under SIGKILLs of the owner, checked by tools/history (servers);
 * - inbox: COR_MESSAGE made by camunda-bpm-correlate's DDL, written and read the way its mapper
 *   does (servers).
 */
import 'reflect-metadata';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { SchemaManager, sleep, sqlClientFor, statement } from '@holdfast/core/kit';
import {
  createTestDataSource,
  describeEachDatabase,
  testDatabases,
  uniqueTablePrefix,
  waitForExit,
  waitUntil,
  type TestDatabaseContext,
} from '@holdfast/testing';
import { DefaultKeyGenerator, Failover, FailoverModule } from '@holdfast/failover';
import {
  InboxHandler,
  InboxModule,
  MessageAcceptor,
  MessageManagement,
  type InboxMessage,
  type InboxModuleOptions,
  INBOX_TABLES,
} from '@holdfast/inbox';
import { checkHistory, formatReport, simbaTerms } from '../../tools/history/check';
import { readHistory } from '../../tools/history/history';
import {
  alive,
  holdfastContender,
  javaContender,
  type Contender,
  type ContendSetup,
} from './support/contenders';
import { jdbcUrl, runJava } from './support/java';
import { corMessageDdl, simbaMutexDdl, type ServerDatabase } from './support/seed-ddl';

const SERVERS = testDatabases().filter((db): db is ServerDatabase => db !== 'sqlite');

/** Waits like `waitUntil`, but resolves with undefined instead of throwing when time runs out. */
const within = <T>(probe: () => T | Promise<T>, timeout: number) =>
  waitUntil(probe, { timeout }).catch(() => undefined);

/** The JavaScript twin of FailoverKeys.Country (a Java record): its toString() is its key. */
class Country {
  constructor(
    readonly code: string,
    readonly population: number,
  ) {}

  toString(): string {
    return `Country[code=${this.code}, population=${this.population}]`;
  }
}

type Method = 'one' | 'none' | 'many';
interface Vector {
  method: Method;
  args: unknown[];
}

/** Same names as FailoverKeys.vectors() in Java; the test checks that both lists match. */
const VECTORS: Record<string, Vector> = {
  'no-args': { method: 'none', args: [] },
  'empty-string': { method: 'one', args: [''] },
  ascii: { method: 'one', args: ['FR'] },
  unicode: { method: 'one', args: ['Zürich – 東京 – 🚀'] },
  combining: { method: 'one', args: ['e\u0301té'] },
  separators: { method: 'one', args: ['a:b,c'] },
  int: { method: 'one', args: [42] },
  negative: { method: 'one', args: [-7] },
  zero: { method: 'one', args: [0] },
  'max-safe-long': { method: 'one', args: [Number.MAX_SAFE_INTEGER] },
  fraction: { method: 'one', args: [3.25] },
  'small-fraction': { method: 'one', args: [0.1] },
  'big-integer': { method: 'one', args: [123456789012345678901234567890n] },
  true: { method: 'one', args: [true] },
  false: { method: 'one', args: [false] },
  null: { method: 'one', args: [null] },
  'string-array': { method: 'one', args: [['a', 'b', 'c']] },
  'number-list': { method: 'one', args: [[1, 2.5, -3]] },
  'nested-arrays': { method: 'one', args: [[[1, 2], [3]]] },
  'empty-array': { method: 'one', args: [[]] },
  'array-with-null': { method: 'one', args: [['a', null, 'b']] },
  'value-object': { method: 'one', args: [new Country('FR', 68_000_000)] },
  'thousand-ascii': { method: 'one', args: ['x'.repeat(1000)] },
  'thousand-unicode': { method: 'one', args: ['ü€😀'.repeat(250)] },
  'several-args': { method: 'many', args: ['FR', 42, true] },
  'several-with-array': { method: 'many', args: [['a', 'b'], '', 1.5] },
};

const FAILOVER_NAMES: Record<Method, string> = {
  one: 'interop-one',
  none: 'interop-none',
  many: 'interop-many',
};

/** Each call returns a marker naming the vector, so its stored row can be found by PAYLOAD. */
@Injectable()
class KeyedUpstream {
  vector = '';

  @Failover({ name: 'interop-one' })
  async one(_arg: unknown): Promise<{ vector: string }> {
    return { vector: `@@${this.vector}@@` };
  }

  @Failover({ name: 'interop-none' })
  async none(): Promise<{ vector: string }> {
    return { vector: `@@${this.vector}@@` };
  }

  @Failover({ name: 'interop-many' })
  async many(_a: unknown, _b: unknown, _c: unknown): Promise<{ vector: string }> {
    return { vector: `@@${this.vector}@@` };
  }
}

interface JavaKey {
  failover: string;
  rawKey: string;
  uuid: string;
}

async function javaKeys(): Promise<Map<string, JavaKey>> {
  const out = await runJava('FailoverKeys', []);
  const keys = new Map<string, JavaKey>();
  for (const line of out.split('\n').filter(Boolean)) {
    const [vector, failover, raw, uuid] = line.split('\t');
    const rawKey = raw.replace(/\\(.)/g, (_, c: string) => (c === 't' ? '\t' : c === 'n' ? '\n' : c));
    keys.set(vector, { failover, rawKey, uuid });
  }
  return keys;
}

/** Calls the decorated method with the vector and reads the FAILOVER_KEY Holdfast stored for it. */
async function storedKey(ctx: TestDatabaseContext, upstream: KeyedUpstream, name: string): Promise<string> {
  const { method, args } = VECTORS[name];
  upstream.vector = name;
  await (upstream[method] as (...a: unknown[]) => Promise<unknown>)(...args);
  const table = `${ctx.prefix}FAILOVER_STORE`;
  // The default write-behind stores after the call returns.
  return waitUntil(
    async () => {
      const rows = await ctx.sql.query<{ k: string; p: unknown }>(
        statement(
          `SELECT FAILOVER_KEY AS k, PAYLOAD AS p FROM ${table} WHERE FAILOVER_NAME = ${ctx.sql.dialect.placeholder(1)}`,
          [FAILOVER_NAMES[method]],
        ),
      );
      return rows.find((r) => String(r.p).includes(`@@${name}@@`))?.k;
    },
    { message: `the FAILOVER_STORE row of vector '${name}'` },
  );
}

describeEachDatabase(
  'failover keys: Holdfast @Failover and the Java library agree',
  (ctx) => {
    let app: INestApplication;
    let java: Map<string, JavaKey>;

    beforeAll(async () => {
      java = await javaKeys();
      const moduleRef = await Test.createTestingModule({
        imports: [
          FailoverModule.forRoot({
            store: { type: 'sql', dataSource: ctx.dataSource, tablePrefix: ctx.prefix, schema: 'create' },
            cleanup: { enabled: false },
          }),
        ],
        providers: [KeyedUpstream],
      }).compile();
      app = await moduleRef.createNestApplication({ logger: false }).init();
    }, 120_000);

    afterAll(async () => {
      await app?.close();
    });

    it('has the same vectors in Java and in this test', () => {
      expect([...java.keys()].sort()).toEqual(Object.keys(VECTORS).sort());
      for (const [name, key] of java)
        expect([name, key.failover]).toEqual([name, FAILOVER_NAMES[VECTORS[name].method]]);
    });

    it.each(Object.keys(VECTORS))('stores the Java key for %s', async (name) => {
      const stored = await storedKey(ctx, app.get(KeyedUpstream), name);
      const expected = java.get(name)!;
      // On a difference, the raw keys explain it: Holdfast's layer 1 for the same arguments.
      let raw: string;
      try {
        raw = new DefaultKeyGenerator().key(VECTORS[name].args);
      } catch (error) {
        raw = `(throws ${(error as Error).message})`;
      }
      const shown = { holdfastRaw: raw.slice(0, 100), javaRaw: expected.rawKey.slice(0, 100) };
      expect({ key: stored, ...shown }).toEqual({ key: expected.uuid, ...shown });
    });
  },
  { tables: ['FAILOVER_STORE'], tag: 'ifk' },
);

// ---- Simba: Java contenders and Holdfast processes on one simba_mutex ----------------------

const SIMBA_SECONDS = Number(process.env.HOLDFAST_INTEROP_SIMBA_SECONDS ?? 30);
const SLOTS = ['java-a', 'java-b', 'holdfast-a', 'holdfast-b', 'holdfast-c'];
const TTL = 1_000;
const TRANSITION = 1_500;

interface ContentionRun {
  db: ServerDatabase;
  kills: number;
  /** Takeovers that did not happen within 15 s. */
  stalls: number;
  ownedSlots: string[];
  terms: number;
  report: string;
  ok: boolean;
  output: string[];
}

/**
 * Two Java contenders and three Holdfast processes contend for SIMBA_SECONDS on one mutex; the
 * owner is SIGKILLed after holding it 0.8-2 s and restarted once someone else owns. While some
 * slot has not owned yet, the standbys that have are paused during the takeover, so that every
 * slot gets its turn within the run.
 */
async function contendAcrossLanguages(db: ServerDatabase): Promise<ContentionRun> {
  const prefix = uniqueTablePrefix(`isim_${db}`);
  const setupDataSource = await createTestDataSource(db, { poolSize: 1 });
  await setupDataSource.query(simbaMutexDdl(db, `${prefix}simba_mutex`));
  const history = join(mkdtempSync(join(tmpdir(), 'interop-simba-')), 'history.jsonl');
  writeFileSync(history, '');
  const setup: ContendSetup = { db, prefix, mutex: 'interop', history, ttl: TTL, transition: TRANSITION };
  const incarnations = new Map<string, number>();
  const start = async (slot: string): Promise<Contender> => {
    const n = (incarnations.get(slot) ?? 0) + 1;
    incarnations.set(slot, n);
    const proc = `${slot}#${n}`;
    return slot.startsWith('java') ? javaContender(setup, slot, proc) : holdfastContender(setup, slot, proc);
  };
  const current = new Map<string, Contender>();
  const everyone: Contender[] = [];
  const launch = async (slot: string) => {
    const contender = await start(slot);
    current.set(slot, contender);
    everyone.push(contender);
  };
  let kills = 0;
  let stalls = 0;
  try {
    for (const slot of SLOTS) await launch(slot);
    await within(() => [...current.values()].every((c) => c.ready || !alive(c)), 90_000);
    const owned = new Set<string>();
    const end = performance.now() + SIMBA_SECONDS * 1_000;
    while (performance.now() < end) {
      const owner = await within(() => [...current.values()].find((c) => c.owner && alive(c)), 15_000);
      if (!owner) {
        stalls++;
        continue;
      }
      owned.add(owner.slot);
      await sleep(800 + Math.random() * 1_200);
      if (!owner.owner || !alive(owner)) continue;
      const newcomers = SLOTS.some((slot) => !owned.has(slot));
      const held = newcomers
        ? [...current.values()].filter((c) => c !== owner && owned.has(c.slot) && alive(c))
        : [];
      for (const c of held) c.pause();
      owner.child.kill('SIGKILL');
      kills++;
      const next = await within(
        () => [...current.values()].find((c) => c !== owner && c.owner && alive(c)),
        15_000,
      );
      if (!next) stalls++;
      for (const c of held) c.resume();
      await launch(owner.slot);
    }
  } finally {
    for (const c of everyone) c.child.kill('SIGKILL');
    await Promise.all(everyone.map((c) => waitForExit(c.child, 10_000)));
    await setupDataSource.query(`DROP TABLE IF EXISTS ${prefix}simba_mutex`).catch(() => undefined);
    await setupDataSource.destroy();
  }
  const parsed = readHistory(history);
  const result = checkHistory(parsed);
  const { terms } = simbaTerms(parsed.entries, setup.mutex);
  const ownedSlots = [...new Set(terms.map((t) => t.proc.split('#')[0]))].sort();
  const silent = SLOTS.filter((slot) => !ownedSlots.includes(slot));
  return {
    db,
    kills,
    stalls,
    ownedSlots,
    terms: terms.length,
    report: formatReport(parsed, result),
    ok: result.ok,
    // What the slots that never owned printed: the reason, when a lib refused the table.
    output: everyone
      .filter((c) => silent.includes(c.slot))
      .flatMap((c) => c.output.map((l) => `${c.proc}: ${l}`)),
  };
}

if (SERVERS.length) {
  describe('Simba: 2 Java contenders (Simba SQL) and 3 Holdfast processes on a table made by Simba DDL', () => {
    it.each(SERVERS)(
      `[%s] never two owners at once, tokens only grow, every process owns (${SIMBA_SECONDS} s, SIGKILL of the owner)`,
      async (db) => {
        const run = await contendAcrossLanguages(db);
        const summary = `${run.db}: ${run.terms} terms, ${run.kills} owner SIGKILLs, ${run.stalls} stalls, owners ${run.ownedSlots.join(', ')}`;
        // The figures of the last run, for the README and reports: .tmp/interop/simba-<db>.txt
        mkdirSync(join(__dirname, '../../.tmp/interop'), { recursive: true });
        writeFileSync(join(__dirname, `../../.tmp/interop/simba-${db}.txt`), `${summary}\n${run.report}\n`);
        expect({ summary, ok: run.ok, report: run.ok ? '' : run.report }).toEqual({
          summary,
          ok: true,
          report: '',
        });
        expect({ summary, owned: run.ownedSlots, output: run.output.slice(-30) }).toEqual({
          summary,
          owned: [...SLOTS].sort(),
          output: [],
        });
        expect({ summary, kills: run.kills >= 3, stalls: run.stalls }).toEqual({
          summary,
          kills: true,
          stalls: 0,
        });
      },
      (SIMBA_SECONDS + 180) * 1_000,
    );
  });
}

// ---- Inbox: COR_MESSAGE shared with camunda-bpm-correlate ----------------------------------

const NAMESPACE = 'io.holixon.example';

interface JavaMessage {
  id: string;
  payloadEncoding: string;
  payloadTypeNamespace: string;
  payloadTypeName: string;
  payload: string | null;
  inserted: string;
  timeToLiveDuration: string | null;
  expiration: string | null;
  retries: number;
  nextRetry: string | null;
  error: string | null;
  status: 'IN_PROGRESS' | 'RETRYING' | 'PAUSED' | 'MAX_RETRIES_REACHED';
}

@Injectable()
class CorrelateHandlers {
  readonly received: InboxMessage[] = [];

  @InboxHandler({ namespace: NAMESPACE, name: 'OrderPlaced' })
  async orderPlaced(message: InboxMessage): Promise<void> {
    this.received.push(message);
  }

  @InboxHandler({ namespace: NAMESPACE, name: 'PaymentRefused' })
  async paymentRefused(): Promise<void> {
    throw new Error('payment service said no');
  }

  /** Holds its delivery until `release()`: the message stays claimed meanwhile. */
  started = false;
  release: () => void = () => undefined;
  private readonly gate = new Promise<void>((resolve) => (this.release = resolve));

  @InboxHandler({ namespace: NAMESPACE, name: 'SlowShipment' })
  async slowShipment(): Promise<void> {
    this.started = true;
    await this.gate;
  }
}

for (const db of SERVERS) {
  describe(`COR_MESSAGE made by camunda-bpm-correlate's DDL, shared with its mapper [${db}]`, () => {
    const prefix = uniqueTablePrefix(`icor_${db}`);
    const table = `${prefix}COR_MESSAGE`;
    const url = jdbcUrl(db);
    let dataSource: Awaited<ReturnType<typeof createTestDataSource>>;
    const apps: INestApplication[] = [];

    const javaRead = async (id: string, maxRetries: number): Promise<JavaMessage | null> =>
      JSON.parse(await runJava('CorrelateMessages', ['read', url, table, id, String(maxRetries)]));
    const inbox = async (options: Partial<InboxModuleOptions>): Promise<INestApplication> => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          InboxModule.forRoot({ dataSource, tablePrefix: prefix, pollInterval: '100ms', ...options }),
        ],
        providers: [CorrelateHandlers],
      }).compile();
      const app = await moduleRef.createNestApplication({ logger: false }).init();
      apps.push(app);
      return app;
    };
    const retriesOf = async (id: string): Promise<number | undefined> => {
      const placeholder = db === 'postgres' ? '$1' : '?';
      const rows: { r: unknown }[] = await dataSource.query(
        `SELECT RETRIES AS r FROM ${table} WHERE ID = ${placeholder}`,
        [id],
      );
      return rows.length ? Number(rows[0].r) : undefined;
    };

    beforeAll(async () => {
      dataSource = await createTestDataSource(db, { poolSize: 4 });
      await dataSource.query(corMessageDdl(db, table));
      // Holdfast's own table beside the seed's (competing nodes take turns at the cleanup there).
      await new SchemaManager(sqlClientFor(dataSource)).apply(INBOX_TABLES.lease, prefix, 'create');
    }, 60_000);

    afterEach(async () => {
      while (apps.length) await apps.pop()!.close();
    });

    afterAll(async () => {
      await dataSource?.query(`DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
      await dataSource?.query(`DROP TABLE IF EXISTS ${prefix}HOLDFAST_INBOX_LEASE`).catch(() => undefined);
      await dataSource?.destroy();
    });

    it("delivers messages the Java mapper wrote ('jackson' and its fixture's 'JACKSON'), and the rows go", async () => {
      const payload = { orderId: 'o-1', amount: 42, customer: 'Zoë' };
      await runJava('CorrelateMessages', [
        'insert',
        url,
        table,
        'java-1',
        NAMESPACE,
        'OrderPlaced',
        'jackson',
        JSON.stringify(payload),
        'PT10M',
      ]);
      await runJava('CorrelateMessages', [
        'insert',
        url,
        table,
        'java-2',
        NAMESPACE,
        'OrderPlaced',
        'JACKSON',
        JSON.stringify({ ...payload, orderId: 'o-2' }),
      ]);
      const app = await inbox({});
      const handlers = app.get(CorrelateHandlers);
      await waitUntil(() => handlers.received.length >= 2, { timeout: 30_000, message: 'two deliveries' });
      expect(
        handlers.received
          .map((m) => ({ id: m.id, type: m.type, payload: m.payload, ttl: m.ttl ?? null }))
          .sort((a, b) => a.id.localeCompare(b.id)),
      ).toEqual([
        {
          id: 'java-1',
          type: expect.objectContaining({ namespace: NAMESPACE, name: 'OrderPlaced' }),
          payload,
          ttl: 'PT10M',
        },
        {
          id: 'java-2',
          type: expect.objectContaining({ namespace: NAMESPACE, name: 'OrderPlaced' }),
          payload: { ...payload, orderId: 'o-2' },
          ttl: null,
        },
      ]);
      // camunda-correlate deletes a message once correlated; so does Holdfast after delivery.
      await waitUntil(async () => (await retriesOf('java-1')) === undefined, {
        message: 'the row of java-1 to go',
      });
      expect(await javaRead('java-2', 5)).toBeNull();
    }, 120_000);

    it('a message Holdfast accepted and retried reads in Java as RETRYING with real times', async () => {
      const app = await inbox({ retry: { maxRetries: 3, initialDelay: '60s', multiplier: 1, jitter: 0 } });
      const before = Date.now();
      await app.get(MessageAcceptor).accept({
        id: 'hf-retry',
        type: { namespace: NAMESPACE, name: 'PaymentRefused' },
        payload: { paymentId: 'p-1' },
        ttl: 'PT1H',
      });
      await waitUntil(async () => (await retriesOf('hf-retry')) === 1, {
        timeout: 30_000,
        message: 'a failed attempt',
      });
      const row = (await javaRead('hf-retry', 3))!;
      const inserted = Date.parse(row.inserted);
      const nextRetry = Date.parse(row.nextRetry ?? '');
      expect(row).toMatchObject({
        payloadEncoding: 'jackson',
        payloadTypeNamespace: NAMESPACE,
        payloadTypeName: 'PaymentRefused',
        timeToLiveDuration: 'PT1H',
        retries: 1,
        status: 'RETRYING',
      });
      expect(JSON.parse(row.payload ?? '')).toEqual({ paymentId: 'p-1' });
      expect(row.error).toContain('payment service said no');
      // Real instants: INSERTED is when it was accepted, EXPIRATION one hour later, NEXT_RETRY
      // the 60 s backoff after the failed attempt (one clock on this machine; 30 s of slack).
      expect(Math.abs(inserted - before)).toBeLessThan(30_000);
      expect(Date.parse(row.expiration ?? '') - inserted).toBe(3_600_000);
      expect(nextRetry - inserted).toBeGreaterThan(30_000);
      expect(nextRetry - inserted).toBeLessThan(120_000);
    }, 120_000);

    it('a message Holdfast parked reads in Java as MAX_RETRIES_REACHED, not paused', async () => {
      const app = await inbox({ retry: { maxRetries: 2, initialDelay: '100ms', multiplier: 1, jitter: 0 } });
      await app.get(MessageAcceptor).accept({
        id: 'hf-parked',
        type: { namespace: NAMESPACE, name: 'PaymentRefused' },
        payload: { paymentId: 'p-2' },
      });
      await waitUntil(async () => (await app.get(MessageManagement).get('hf-parked'))?.status === 'parked', {
        timeout: 30_000,
        message: 'the message to be parked',
      });
      const row = (await javaRead('hf-parked', 2))!;
      expect(row).toMatchObject({ retries: 2, status: 'MAX_RETRIES_REACHED' });
      expect(row.error).toContain('payment service said no');
      // NEXT_RETRY is empty or a real time, never a marker a Java reader would take for a date.
      if (row.nextRetry !== null) expect(new Date(row.nextRetry).getUTCFullYear()).toBeLessThan(3000);
    }, 120_000);

    it('a message being delivered reads in Java as IN_PROGRESS, its claim lease a real NEXT_RETRY', async () => {
      const app = await inbox({ visibilityTimeout: '2m' });
      const handlers = app.get(CorrelateHandlers);
      await app.get(MessageAcceptor).accept({
        id: 'hf-in-delivery',
        type: { namespace: NAMESPACE, name: 'SlowShipment' },
        payload: { shipmentId: 's-1' },
      });
      await waitUntil(() => handlers.started, { timeout: 30_000, message: 'the delivery to start' });
      const row = (await javaRead('hf-in-delivery', 5))!;
      handlers.release();
      expect(row).toMatchObject({ retries: 0, error: null, status: 'IN_PROGRESS' });
      if (row.nextRetry !== null) {
        const lease = Date.parse(row.nextRetry) - Date.now();
        expect(lease).toBeGreaterThan(0);
        expect(lease).toBeLessThan(3 * 60_000);
      }
      await waitUntil(async () => (await retriesOf('hf-in-delivery')) === undefined, {
        timeout: 30_000,
        message: 'the delivered row to go',
      });
    }, 120_000);

    it("a message Holdfast paused reads in Java as PAUSED (NEXT_RETRY at camunda-correlate's FAR_FUTURE)", async () => {
      const app = await inbox({ deliver: false });
      await app.get(MessageAcceptor).accept({
        id: 'hf-paused',
        type: { namespace: NAMESPACE, name: 'OrderPlaced' },
        payload: { orderId: 'o-3' },
      });
      await app.get(MessageManagement).pause('hf-paused');
      expect(await javaRead('hf-paused', 5)).toMatchObject({
        retries: 0,
        nextRetry: '4999-12-03T10:15:30Z',
        status: 'PAUSED',
      });
      await app.get(MessageManagement).resume('hf-paused');
      const resumed = (await javaRead('hf-paused', 5))!;
      expect(resumed.status).toBe('IN_PROGRESS');
      expect(resumed.nextRetry).not.toBe('4999-12-03T10:15:30Z');
    }, 120_000);

    it('an exhausted message that Holdfast retries reads in Java as RETRYING and due, not MAX_RETRIES_REACHED', async () => {
      const app = await inbox({ deliver: false, retry: { maxRetries: 2 } });
      const management = app.get(MessageManagement);
      await app.get(MessageAcceptor).accept({
        id: 'hf-exhausted',
        type: { namespace: NAMESPACE, name: 'PaymentRefused' },
        payload: { paymentId: 'p-4' },
      });
      await management.setRetries('hf-exhausted', 2);
      expect(await javaRead('hf-exhausted', 2)).toMatchObject({ retries: 2, status: 'MAX_RETRIES_REACHED' });
      expect((await management.get('hf-exhausted'))!.status).toBe('parked');
      await management.retryNow('hf-exhausted');
      const row = (await javaRead('hf-exhausted', 2))!;
      // One more attempt: below the peer's maximum, with a NEXT_RETRY that has come.
      expect(row).toMatchObject({ retries: 1, status: 'RETRYING' });
      expect(Date.parse(row.nextRetry ?? '')).toBeLessThanOrEqual(Date.now());
      expect((await management.get('hf-exhausted'))!.status).toBe('due');
    }, 120_000);

    it("camunda-correlate's pause and resume (the mapper rewrites every column) hold and release Holdfast's delivery", async () => {
      const acceptor = await inbox({ deliver: false });
      const payload = { orderId: 'o-4', lines: [{ sku: 'ü-1', qty: 2 }] };
      await acceptor.get(MessageAcceptor).accept({
        id: 'java-paused',
        type: { namespace: NAMESPACE, name: 'OrderPlaced' },
        payload,
        ttl: 'PT1H',
      });
      const accepted = await acceptor.get(MessageManagement).get('java-paused');
      await runJava('CorrelateMessages', ['pause', url, table, 'java-paused']);
      const paused = await acceptor.get(MessageManagement).get('java-paused');
      expect(paused?.status).toBe('paused');
      // The round trip through Java's Instant and byte[] kept the times and the payload.
      expect(paused?.inserted.getTime()).toBe(accepted?.inserted.getTime());
      expect(paused?.expiration?.getTime()).toBe(accepted?.expiration?.getTime());
      await acceptor.close();
      apps.splice(apps.indexOf(acceptor), 1);

      const app = await inbox({});
      const handlers = app.get(CorrelateHandlers);
      // Twenty polls: a paused message is not delivered.
      await sleep(2_000);
      expect(handlers.received.map((m) => m.id)).not.toContain('java-paused');
      await runJava('CorrelateMessages', ['resume', url, table, 'java-paused']);
      const delivered = await waitUntil(() => handlers.received.find((m) => m.id === 'java-paused'), {
        timeout: 30_000,
        message: 'the resumed message to be delivered',
      });
      expect(delivered?.payload).toEqual(payload);
    }, 120_000);
  });
}
