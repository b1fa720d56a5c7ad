import type { INestApplicationContext, Provider, Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { DataSource } from 'typeorm';
import { monotonicMillis } from '@holdfast/core/kit';
import { describeEachDatabase, type TestDatabase, type TestDatabaseContext } from '@holdfast/testing';
import {
  defaultContenderId,
  SimbaModule,
  type MutexState,
  type SimbaModuleOptions,
  simbaTable,
} from '../src';

/** A Nest application context with SimbaModule on the test database (table created). */
export async function createSimbaApp(
  ctx: TestDatabaseContext,
  options: SimbaModuleOptions = {},
  providers: Provider[] = [],
  imports: Type[] = [],
): Promise<INestApplicationContext> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      SimbaModule.forRoot({
        dataSource: ctx.dataSource,
        tablePrefix: ctx.prefix,
        schema: 'create',
        ...options,
      }),
      ...imports,
    ],
    providers,
  }).compile();
  await moduleRef.init();
  return moduleRef;
}

/** Polls `predicate` every 20 ms until it is true or `timeoutMs` passes (then throws `what`). */
export async function waitUntil(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = monotonicMillis() + timeoutMs;
  while (!predicate()) {
    if (monotonicMillis() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const sleepMs = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Records every callback of a contender, in order. */
export class RecordingContender {
  readonly events: { kind: 'acquired' | 'released'; state: MutexState }[] = [];
  constructor(
    readonly mutex: string,
    readonly contenderId: string = defaultContenderId(),
  ) {}
  onAcquired(state: MutexState): void {
    this.events.push({ kind: 'acquired', state });
  }
  onReleased(state: MutexState): void {
    this.events.push({ kind: 'released', state });
  }
  count(kind: 'acquired' | 'released'): number {
    return this.events.filter((e) => e.kind === kind).length;
  }
  tokens(): number[] {
    return this.events.filter((e) => e.kind === 'acquired').map((e) => e.state.fencingToken);
  }
}

let counter = 0;
/** A mutex name unique within the test run. */
export function freshMutex(tag = 'm'): string {
  return `${tag}-${process.pid}-${++counter}-${Math.random().toString(36).slice(2, 8)}`;
}

/** The two table layouts the integration suites run on. */
export const SIMBA_LAYOUTS = ['holdfast', 'seed'] as const;
export type SimbaLayout = (typeof SIMBA_LAYOUTS)[number];

/**
 * `simba_mutex` as Simba's own DDL creates it (simba-jdbc's init script for MySQL: unsigned
 * BIGINT times, `owner_id CHAR(32)`, unsigned INT version, no defaults), the same shape on
 * PostgreSQL (no unsigned types there), and on SQLite the MySQL text, which SQLite stores with
 * INTEGER and TEXT affinity.
 */
export function seedSimbaDdl(db: TestDatabase, table: string): string {
  const unsigned = db === 'postgres' ? '' : ' UNSIGNED';
  return (
    `CREATE TABLE ${table} (mutex VARCHAR(66) NOT NULL PRIMARY KEY, ` +
    `acquired_at BIGINT${unsigned} NOT NULL, ttl_at BIGINT${unsigned} NOT NULL, ` +
    `transition_at BIGINT${unsigned} NOT NULL, owner_id CHAR(32) NOT NULL, version INT${unsigned} NOT NULL)`
  );
}

/** Creates `<prefix>simba_mutex` with Simba's DDL on `dataSource`. */
export async function createSeedTable(
  db: TestDatabase,
  dataSource: DataSource,
  prefix: string,
): Promise<void> {
  await dataSource.query(seedSimbaDdl(db, `${prefix}simba_mutex`));
}

/**
 * `describeEachDatabase` once per table layout: on Holdfast's own table (created by the module,
 * `schema: 'create'`) and on a table created by Simba's DDL before the module starts.
 */
export function describeEachSimbaTable(
  title: string,
  body: (ctx: TestDatabaseContext, layout: SimbaLayout) => void,
): void {
  for (const layout of SIMBA_LAYOUTS) {
    describeEachDatabase(
      `${title} (${layout} table)`,
      (ctx) => {
        if (layout === 'seed') beforeAll(() => createSeedTable(ctx.db, ctx.dataSource, ctx.prefix));
        body(ctx, layout);
      },
      { tables: [simbaTable()], tag: layout },
    );
  }
}
