import {
  describeConnectionLimits,
  freeConnections,
  readConnectionLimits,
  type SqlClient,
} from '@holdfast/core/kit';
import type { DoctorOptions } from './doctor-options';
import type { DoctorCheck } from './doctor-report';

const DEFAULT_POOL = 10;
const DEFAULT_HOLDFAST_CONNECTIONS = 3;

/**
 * The connection budget: what the server allows against what the instances need (each its pool
 * plus Holdfast's own connections), and whether one more instance would be admitted now.
 */
export async function connectionsCheck(sql: SqlClient, options: DoctorOptions): Promise<DoctorCheck> {
  const limits = await readConnectionLimits(sql.dialect.name, (s) => sql.query(s));
  if (!limits)
    return { check: 'connections', status: 'skipped', detail: `no connection limit on ${sql.dialect.name}` };
  const own = options.holdfastConnections ?? DEFAULT_HOLDFAST_CONNECTIONS;
  const free = freeConnections(limits);
  const figures = describeConnectionLimits(limits);
  const usable = Math.min(
    limits.maxConnections - limits.reserved,
    limits.account ? limits.account.limit : Infinity,
  );
  if (options.instances !== undefined) {
    const pool = options.poolSize ?? DEFAULT_POOL;
    const needed = options.instances * (pool + own);
    const detail = `${options.instances} instance(s) × (pool ${pool} + Holdfast's ${own}) = ${needed} connection(s); the server allows ${usable} (${figures})`;
    if (needed > usable) {
      return {
        check: 'connections',
        status: 'failure',
        detail,
        fix:
          'raise max_connections (or the account limit), lower the pool size, or put PgBouncer in front of the ' +
          'application pool: past the limit instances are refused at startup (ConnectionBudgetError)',
      };
    }
    if (needed > usable * 0.8) {
      return {
        check: 'connections',
        status: 'warning',
        detail: `${detail}: over 80 % of it, little room for deploys (old and new instances overlap) and administrators`,
        fix: 'raise max_connections or lower the pool size before the next scale-out',
      };
    }
    return { check: 'connections', status: 'ok', detail };
  }
  const detail = `${figures}: room for ${free} more connection(s); one more instance takes Holdfast's ${own} plus its pool`;
  if (free < own + 1) {
    return {
      check: 'connections',
      status: 'warning',
      detail,
      fix:
        'one more instance would be refused at startup (ConnectionBudgetError): raise max_connections or ' +
        'free connections; run doctor with --instances N --pool-size N to check a planned fleet',
    };
  }
  return { check: 'connections', status: 'ok', detail };
}
