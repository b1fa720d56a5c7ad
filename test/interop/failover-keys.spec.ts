/**
 * Failover keys shared with Société Générale's Java failover library: the key Holdfast stores in
 * FAILOVER_KEY through its real `@Failover` path equals the one the Java library computes
 * (DefaultKeyGenerator + `UUID.nameUUIDFromBytes`, test/interop/java/.../FailoverKeys.java) for
 * every argument vector Java can express.
 */
import 'reflect-metadata';
import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { describeEachDatabase, sleep, type TestDatabaseContext } from '@holdfast/core';
import { DefaultKeyGenerator, Failover, FailoverModule } from '@holdfast/failover';
import { runJava } from './support/java';

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
  for (let attempt = 0; attempt < 100; attempt++) {
    const rows = await ctx.sql.query<{ k: string; p: unknown }>(
      `SELECT FAILOVER_KEY AS k, PAYLOAD AS p FROM ${table} WHERE FAILOVER_NAME = ${ctx.sql.dialect.placeholder(1)}`,
      [FAILOVER_NAMES[method]],
    );
    const row = rows.find((r) => String(r.p).includes(`@@${name}@@`));
    if (row) return row.k;
    await sleep(50); // the default write-behind stores after the call returns
  }
  throw new Error(`no FAILOVER_STORE row for vector '${name}' after 5 s`);
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

    it('stores the Java key for every vector', async () => {
      const upstream = app.get(KeyedUpstream);
      const layer1 = new DefaultKeyGenerator();
      const differences: string[] = [];
      for (const name of Object.keys(VECTORS)) {
        const stored = await storedKey(ctx, upstream, name);
        const expected = java.get(name)!;
        if (stored !== expected.uuid) {
          // Only to explain a difference: the raw key Holdfast's layer 1 builds for the same arguments.
          let raw: string;
          try {
            raw = JSON.stringify(layer1.key(VECTORS[name].args));
          } catch (error) {
            raw = `(throws ${(error as Error).message})`;
          }
          differences.push(
            `${name}: Holdfast stored ${stored} (raw ${raw.slice(0, 80)}), Java ${expected.uuid} (raw ${JSON.stringify(expected.rawKey).slice(0, 80)})`,
          );
        }
      }
      expect(differences).toEqual([]);
    });
  },
  { tables: ['FAILOVER_STORE'], tag: 'ifk' },
);
