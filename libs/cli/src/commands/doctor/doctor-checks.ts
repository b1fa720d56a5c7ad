import type { SqlClient } from '@holdfast/core/kit';
import type { DataSource } from 'typeorm';
import { clockCheck } from './clock.check';
import { connectionsCheck } from './connections.check';
import type { DoctorOptions } from './doctor-options';
import type { DoctorCheck } from './doctor-report';
import { galeraCheck } from './galera.check';
import { listenCheck } from './listen.check';
import { pgbouncerCheck } from './pgbouncer.check';
import { readOnlyCheck } from './read-only.check';
import { schemaChecks } from './schema.check';

const DEFAULT_CLOCK_WARN_MS = 1_000;
const DEFAULT_LISTEN_TIMEOUT_MS = 3_000;

/** What every check may look at: the connection, the DataSource and doctor's options. */
export interface DoctorContext {
  readonly sql: SqlClient;
  readonly dataSource: DataSource;
  readonly prefix: string;
  readonly options: DoctorOptions;
}

/** One check of the table: its key, the dialects it runs on (all when absent) and its probe. */
interface DoctorProbe {
  readonly check: string;
  readonly dialects?: readonly string[];
  readonly probe: (ctx: DoctorContext) => Promise<DoctorCheck | DoctorCheck[]>;
}

/** Every check after `connect`, in the order the report lists them. */
const DOCTOR_PROBES: readonly DoctorProbe[] = [
  {
    check: 'clock',
    probe: ({ sql, options }) => clockCheck(sql, options.clockWarnMs ?? DEFAULT_CLOCK_WARN_MS),
  },
  { check: 'read-only', probe: ({ sql, dataSource }) => readOnlyCheck(sql, dataSource) },
  { check: 'pgbouncer', dialects: ['postgres'], probe: ({ dataSource }) => pgbouncerCheck(dataSource) },
  {
    check: 'listen',
    dialects: ['postgres'],
    probe: ({ sql, dataSource, options }) =>
      listenCheck(sql, dataSource, options.listenTimeoutMs ?? DEFAULT_LISTEN_TIMEOUT_MS, options.listenUrl),
  },
  { check: 'schema', probe: ({ sql, prefix }) => schemaChecks(sql, prefix) },
  { check: 'connections', probe: ({ sql, options }) => connectionsCheck(sql, options) },
  {
    check: 'galera',
    dialects: ['mysql', 'mariadb'],
    probe: ({ sql, options }) => galeraCheck(sql, options.locker),
  },
];

/**
 * The checks of the table that apply to the connection's dialect, one after the other. A check
 * that cannot read what it needs (a permission missing) is a warning saying so, not an error.
 */
export async function runDoctorChecks(ctx: DoctorContext): Promise<DoctorCheck[]> {
  const dialect = ctx.sql.dialect.name;
  const checks: DoctorCheck[] = [{ check: 'connect', status: 'ok', detail: `connected to ${dialect}` }];
  for (const { check, dialects, probe } of DOCTOR_PROBES) {
    if (dialects && !dialects.includes(dialect)) continue;
    try {
      checks.push(...[await probe(ctx)].flat());
    } catch (error) {
      checks.push({
        check,
        status: 'warning',
        detail: `could not check: ${error instanceof Error ? error.message : String(error)}`,
        fix: 'give the account Holdfast connects as the right to read this (see the detail), then run doctor again',
      });
    }
  }
  return checks;
}
