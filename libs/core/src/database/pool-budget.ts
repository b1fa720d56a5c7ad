import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { CoordinationPool } from './coordination-pool';
import type { SqlClient } from './sql-client';

/** What one Holdfast component takes of a DataSource's pool at most at once. */
export interface PoolNeed {
  /** Who needs them, as the warning names it: `locker 'orders'`, `simba (simba_mutex)`. */
  readonly component: string;
  /** Connections it may hold at the same moment. */
  readonly connections: number;
  /** True when it keeps them for as long as the application runs (the database lockers). */
  readonly reserved?: boolean;
}

/** The pool size a DataSource was configured with (the drivers' default 10 when not set). */
export function configuredPoolSize(dataSource: DataSource): number {
  const coordination = CoordinationPool.of(dataSource);
  if (coordination) return coordination.maxConnections;
  const options = dataSource.options as {
    poolSize?: number;
    extra?: { max?: number; connectionLimit?: number };
  };
  return options.poolSize ?? options.extra?.max ?? options.extra?.connectionLimit ?? 10;
}

interface Budget {
  needs: Map<string, PoolNeed>;
  check?: NodeJS.Immediate;
  /** The pool size the last warning asked for (0: none yet). */
  warnedFor: number;
}

const budgets = new WeakMap<DataSource, Budget>();

/**
 * Records what a component takes of the DataSource's pool. On the next turn of the event loop
 * after a declaration, a pool too small for the modules declared so far plus one connection for
 * the application's own work is reported by a warning naming each module's share and the size to
 * configure; a module that declares later and raises that size gets one more, complete warning
 * (modules start one after another, with database work in between).
 * A waiting statement fails after its own bound rather than blocking forever, but leases and
 * keep-alives that wait for a connection can miss their deadlines. Not for single-connection
 * dialects (SQLite): there every statement takes its turn on the one connection, nor for a
 * coordination lane (the default, #31 and #43): a lane is sized by what its statements are, not
 * by these declarations (ConnectionBudget).
 */
export function declarePoolNeed(sql: SqlClient, need: PoolNeed, logger?: Logger): void {
  if (sql.dialect.singleConnection) return;
  const dataSource = sql.dataSource;
  if (CoordinationPool.of(dataSource)) return;
  let budget = budgets.get(dataSource);
  if (!budget) budgets.set(dataSource, (budget = { needs: new Map(), warnedFor: 0 }));
  budget.needs.set(need.component, need);
  if (budget.check) clearImmediate(budget.check);
  const current = budget;
  current.check = setImmediate(() => {
    current.check = undefined;
    const needs = [...current.needs.values()];
    const message = poolBudgetWarning(configuredPoolSize(dataSource), needs);
    const required = needs.reduce((sum, need) => sum + need.connections, 0) + 1;
    if (message && required > current.warnedFor) {
      current.warnedFor = required;
      (logger ?? new Logger('HoldfastPool')).warn(message);
    }
  });
  current.check.unref();
}

/** The warning for a pool of `size` under these needs, or undefined when it leaves the application one. */
export function poolBudgetWarning(size: number, needs: readonly PoolNeed[]): string | undefined {
  const holdfast = needs.reduce((sum, need) => sum + need.connections, 0);
  if (size >= holdfast + 1) return undefined;
  const shares = needs
    .map(
      (n) =>
        `${n.component}: ${n.connections}${n.reserved ? ' (kept for as long as the application runs)' : ''}`,
    )
    .join(', ');
  return (
    `The DataSource's pool has ${size} connection(s) and Holdfast's modules on it may hold ${holdfast} at once ` +
    `(${shares}): leases and keep-alives would wait for a connection and the application's own work get none. ` +
    `Raise poolSize to at least ${holdfast + 1} plus what the application itself needs at once (README: Pool sizing).`
  );
}
