import { SqlClient, sqliteGate, type SqlDialect } from '@holdfast/core/kit';
import type { DataSource, EntityManager, EntitySubscriberInterface, QueryRunner } from 'typeorm';
import { InboxTransactionError } from '../errors';
import { activeClsManager } from './cls-transaction';

/** Where an accept writes: the caller's transaction (see the README, "Accepting in your transaction"). */
export interface AcceptOptions {
  /**
   * The EntityManager of the caller's transaction (`dataSource.transaction(async (manager) => …)`):
   * the message is written in it, exists only if it commits, and wakes the delivery after the
   * commit. A manager with no transaction open (`dataSource.manager`) writes as without options.
   */
  manager?: EntityManager;
  /** The same through a QueryRunner whose transaction the caller opened (`startTransaction()`). */
  queryRunner?: QueryRunner;
}

/** The caller's open transaction, as the accept writes into it. */
export interface CallerTransaction {
  /** A client whose statements run on the caller's connection, inside its transaction. */
  sql: SqlClient;
  /** Runs `wake` once the caller's outermost transaction commits; never after a rollback of its level. */
  afterCommit(wake: () => void): void;
}

/**
 * The QueryRunner of the caller's open transaction from `options` (or, without options, from `@nestjs-cls/transactional`
 * when a transaction is active there); undefined when there is none (the accept then runs on its own
 * connection, as before). Throws InboxTransactionError for a transaction the inbox cannot write into.
 */
export function callerRunner(
  options: AcceptOptions | undefined,
  inbox: { dataSource: DataSource; dialect: SqlDialect },
): QueryRunner | undefined {
  if (options !== undefined && (options === null || typeof options !== 'object'))
    throw new InboxTransactionError('options', 'must be an object { manager } or { queryRunner }');
  const given = options?.manager !== undefined || options?.queryRunner !== undefined;
  if (options?.manager !== undefined && options.queryRunner !== undefined)
    throw new InboxTransactionError('manager', "give either 'manager' or 'queryRunner', not both");
  let option = 'manager';
  let runner: QueryRunner | undefined;
  let dataSource: DataSource | undefined;
  if (options?.queryRunner !== undefined) {
    option = 'queryRunner';
    runner = options.queryRunner;
    if (runner === null || typeof runner !== 'object' || typeof runner.query !== 'function')
      throw new InboxTransactionError(option, 'is not a TypeORM QueryRunner');
    dataSource = runner.dataSource;
  } else if (options?.manager !== undefined) {
    const manager = options.manager;
    if (manager === null || typeof manager !== 'object' || !('dataSource' in manager))
      throw new InboxTransactionError(option, 'is not a TypeORM EntityManager');
    runner = manager.queryRunner;
    dataSource = manager.dataSource;
  } else {
    const manager = activeClsManager();
    if (!manager) return undefined;
    option = '@nestjs-cls/transactional';
    runner = manager.queryRunner;
    dataSource = manager.dataSource;
  }
  if (dataSource !== inbox.dataSource)
    throw new InboxTransactionError(
      option,
      `belongs to another DataSource (${describe(dataSource)}) than the inbox's (${describe(inbox.dataSource)}); ` +
        `a transaction cannot span two DataSources`,
    );
  if (!runner || !runner.isTransactionActive) {
    if (runner?.isReleased && given) throw new InboxTransactionError(option, 'its QueryRunner is released');
    return undefined; // no transaction open: the accept commits on its own
  }
  if (runner.isReleased) throw new InboxTransactionError(option, 'its QueryRunner is released');
  return runner;
}

/**
 * The caller's open transaction on `open` (from callerRunner), as the accept writes into it.
 * Synchronous checks first (callerRunner) keep an accept without a transaction on its old path.
 */
export async function joinTransaction(
  open: QueryRunner,
  inbox: { dataSource: DataSource; dialect: SqlDialect },
): Promise<CallerTransaction> {
  hookDataSource(inbox.dataSource);
  // SQLite: TypeORM shares its one connection between all runners, so a statement of this
  // process's delivery would run inside the caller's transaction and see the message early. The
  // DataSource's gate (which every Holdfast statement on it waits for) is held until the caller's
  // transaction ends. Taken before the insert: the first accept of the transaction waits for a
  // Holdfast statement running now.
  if (inbox.dialect.singleConnection && !gateRelease.has(open)) {
    const release = await sqliteGate(inbox.dataSource).acquire();
    if (gateRelease.has(open)) release();
    else gateRelease.set(open, release);
  }
  return {
    sql: new SqlClient(inbox.dataSource, inbox.dialect, open, {}, true),
    afterCommit(wake) {
      const list = pending.get(open) ?? [];
      list.push({ depth: depthOf(open), wake });
      pending.set(open, list);
    },
  };
}

function describe(dataSource: DataSource | undefined): string {
  if (!dataSource) return 'none';
  const name = (dataSource as { name?: string }).name;
  return `${dataSource.options?.type ?? 'unknown'}${name ? ` '${name}'` : ''}`;
}

/** A wake-up waiting for a commit, with the transaction depth (savepoint level) it was written at. */
interface PendingWake {
  depth: number;
  wake: () => void;
}

const pending = new WeakMap<QueryRunner, PendingWake[]>();
const gateRelease = new WeakMap<QueryRunner, () => void>();
const hooked = new WeakSet<DataSource>();

/** TypeORM counts nested transactions (savepoints) per runner; 1 inside the outermost one. */
function depthOf(runner: QueryRunner): number {
  return (runner as unknown as { transactionDepth?: number }).transactionDepth ?? 1;
}

/**
 * One subscriber per DataSource hears every runner's commit and rollback (TypeORM broadcasts them
 * after the COMMIT, ROLLBACK or savepoint statement has run).
 */
function hookDataSource(dataSource: DataSource): void {
  if (hooked.has(dataSource)) return;
  hooked.add(dataSource);
  const subscriber: EntitySubscriberInterface = {
    afterTransactionCommit: (event) => settle(event.queryRunner, 'commit'),
    afterTransactionRollback: (event) => settle(event.queryRunner, 'rollback'),
  };
  (dataSource.subscribers as EntitySubscriberInterface[]).push(subscriber);
}

function settle(runner: QueryRunner, outcome: 'commit' | 'rollback'): void {
  const depth = runner.isTransactionActive ? depthOf(runner) : 0;
  const list = pending.get(runner);
  if (depth > 0) {
    if (!list) return;
    // A savepoint released: what it wrote now belongs to the level around it. Rolled back: what
    // it wrote is gone.
    const kept =
      outcome === 'commit'
        ? list.map((p) => ({ depth: Math.min(p.depth, depth), wake: p.wake }))
        : list.filter((p) => p.depth <= depth);
    pending.set(runner, kept);
    return;
  }
  pending.delete(runner);
  const release = gateRelease.get(runner);
  gateRelease.delete(runner);
  release?.();
  if (outcome === 'commit' && list) for (const p of list) p.wake();
}
