/**
 * npm run bench -- statement-template [--rounds 7] [--ms 200]
 *
 * What binding a hot statement's values by name (`StatementTemplate`) costs against the params
 * array written by hand, as the failover store's point read and one-row upsert write it today
 * (cached text, values in the order the text needs):
 *  - bind, 2 values: `find.bind({ name, key })` against `{ sql, params: [name, key] }`;
 *  - bind, 6 values: `upsert.bind(row)` against `{ sql, params: [row.name, … row.payloadClass] }`;
 *  - the SQLite point read through `SqlClient.rowReader`, synchronous, the recovery path's read on
 *    SQLite: the reader of a template (`row({ name, key })`) against better-sqlite3's own
 *    statement (`raw().get(name, key)`) on the same file.
 * Synchronous loops (no promise per call), each operation run in turns of `--ms` going forward
 * then backward, `--rounds` rounds; the ratio is by hand (or raw) ÷ template per round, median:
 * above 1.00 the template is faster, 1.00 costs the same.
 */
import Database from 'better-sqlite3';
import {
  sqlClientFor,
  statement,
  TemplateBinder,
  type SqlClient,
  type StatementTemplate,
} from '@holdfast/core/kit';
import { createTestDataSource, tempSqliteFile } from '@holdfast/testing';
import { median, numberArg, printTable } from './support/bench-kit';

interface Key {
  name: string;
  key: string;
}

interface Row {
  name: string;
  key: string;
  asOf: unknown;
  expireOn: unknown;
  payload: unknown;
  payloadClass: string;
}

const KEYS = 1_000;

/** Calls of `op` per second over about `ms`, in batches of 1,000 between clock reads. */
function rate(op: (i: number) => unknown, ms: number): number {
  let done = 0;
  let sink: unknown;
  const started = performance.now();
  const deadline = started + ms;
  while (performance.now() < deadline) {
    for (let j = 0; j < 1_000; j++) sink = op(done++);
  }
  if (sink === Symbol.for('never')) console.log(sink);
  return done / ((performance.now() - started) / 1000);
}

/** Each op's calls per second, per round, in turns forward then backward. */
function rounds<K extends string>(
  ops: Record<K, (i: number) => unknown>,
  count: number,
  ms: number,
): Record<K, number[]> {
  const keys = Object.keys(ops) as K[];
  const out = Object.fromEntries(keys.map((k) => [k, [] as number[]])) as Record<K, number[]>;
  for (const k of keys) rate(ops[k], ms); // warm-up
  for (let r = 0; r < count; r++) {
    const sums = new Map<K, number>(keys.map((k) => [k, 0]));
    for (let pass = 0; pass < 4; pass++) {
      for (const k of pass % 2 ? [...keys].reverse() : keys) sums.set(k, sums.get(k)! + rate(ops[k], ms / 4));
    }
    for (const k of keys) out[k].push(sums.get(k)! / 4);
  }
  return out;
}

export async function main(args: string[]): Promise<void> {
  const count = numberArg(args, '--rounds', 7);
  const ms = numberArg(args, '--ms', 200);
  const file = tempSqliteFile('template');
  const dataSource = await createTestDataSource('sqlite', { sqliteFile: file });
  const sql: SqlClient = sqlClientFor(dataSource);
  const d = sql.dialect;
  const table = 'BENCH_TEMPLATE';
  await sql.execute(
    statement(`CREATE TABLE ${table} (NAME TEXT, K TEXT, PAYLOAD TEXT, PRIMARY KEY (NAME, K))`),
  );
  const names = Array.from({ length: KEYS }, (_, i) => `key-${i}`);
  await sql.transaction(async (tx) => {
    for (const k of names)
      await tx.execute(statement(`INSERT INTO ${table} VALUES (?, ?, ?)`, ['bench', k, `{"v":"${k}"}`]));
  });

  const fb = new TemplateBinder<Key>(d);
  const find = fb.template(
    `SELECT PAYLOAD AS payload FROM ${table} WHERE NAME = ${fb.slot('name')} AND K = ${fb.slot('key')}`,
  );
  const findText = find.sql;
  const ub = new TemplateBinder<Row>(d);
  const slots = (['name', 'key', 'asOf', 'expireOn', 'payload', 'payloadClass'] as const).map((s) =>
    ub.slot(s),
  );
  const upsert: StatementTemplate<Row> = ub.template(`INSERT INTO T VALUES (${slots.join(', ')})`);
  const upsertText = upsert.sql;
  const values = names.map((key) => ({ name: 'bench', key }));
  const rows: Row[] = names.map((key) => ({
    name: 'bench',
    key,
    asOf: '2026-01-01T00:00:00.000Z',
    expireOn: '2026-01-01T01:00:00.000Z',
    payload: '{}',
    payloadClass: 'Object',
  }));

  const bind2 = rounds(
    {
      hand: (i) => ({ sql: findText, params: [values[i % KEYS].name, values[i % KEYS].key] }),
      template: (i) => find.bind(values[i % KEYS]),
    },
    count,
    ms,
  );
  const bind6 = rounds(
    {
      hand: (i) => {
        const r = rows[i % KEYS];
        return { sql: upsertText, params: [r.name, r.key, r.asOf, r.expireOn, r.payload, r.payloadClass] };
      },
      template: (i) => upsert.bind(rows[i % KEYS]),
    },
    count,
    ms,
  );

  const raw = new Database(file, { readonly: true });
  const rawFind = raw.prepare(findText).raw();
  const byTemplate = sql.rowReader(find)!;
  const read = rounds(
    {
      raw: (i) => rawFind.get(values[i % KEYS].name, values[i % KEYS].key),
      template: (i) => byTemplate.row(values[i % KEYS]),
    },
    count,
    ms,
  );
  raw.close();
  await dataSource.destroy();

  const ratio = (base: number[], candidate: number[]) => base.map((b, r) => candidate[r] / b);
  const line = (label: string, baseLabel: string, base: number[], candidate: number[]) => {
    const r = ratio(base, candidate);
    return [label, baseLabel, median(base), median(candidate), median(r), Math.min(...r), Math.max(...r)];
  };
  printTable(
    `statement-template: calls per second, ${count} rounds of ${ms} ms in turns, medians; ratio = template ÷ baseline`,
    ['operation', 'baseline', 'baseline calls/s', 'template calls/s', 'ratio', 'lowest', 'highest'],
    [
      line('bind 2 values (point read)', 'array by hand', bind2.hand, bind2.template),
      line('bind 6 values (one-row upsert)', 'array by hand', bind6.hand, bind6.template),
      line('SQLite point read, rowReader(template)', 'better-sqlite3 raw().get', read.raw, read.template),
    ],
  );
  const ns = (perSecond: number[]) => (1e9 / median(perSecond)).toFixed(1);
  console.log(
    `per call: bind 2 values ${ns(bind2.template)} ns (by hand ${ns(bind2.hand)} ns), 6 values ${ns(bind6.template)} ns ` +
      `(by hand ${ns(bind6.hand)} ns); SQLite point read ${ns(read.template)} ns (raw ${ns(read.raw)} ns)`,
  );
}
