import type { SqlClient } from '@holdfast/core/kit';
import type { DoctorCheck } from './doctor-report';
import { field, one } from './sql-rows';

/** A difference past which leases and timestamps are wrong by more than a lease's margin. */
const CLOCK_FAIL_MS = 5_000;

/**
 * The application's clock against the database's: Holdfast takes every lease time from the
 * database, but the lease-database locker compares them with this host's, and the inbox's
 * INSERTED and NEXT_RETRY are written from the application's clock.
 */
export async function clockCheck(sql: SqlClient, warnMs: number): Promise<DoctorCheck> {
  if (sql.dialect.name === 'sqlite') {
    return { check: 'clock', status: 'ok', detail: 'SQLite runs in this process: one clock' };
  }
  const before = Date.now();
  const now = Number(field(await one(sql, `SELECT ${sql.dialect.nowMillis} AS now_ms`), 'now_ms'));
  const after = Date.now();
  const rtt = after - before;
  const difference = now - (before + after) / 2;
  const size = Math.abs(difference);
  const detail =
    `the database's clock is ${Math.round(size)} ms ${difference >= 0 ? 'ahead of' : 'behind'} this host's ` +
    `(± ${Math.ceil(rtt / 2)} ms, the round trip's half)`;
  const margin = size - rtt / 2;
  if (margin < warnMs) return { check: 'clock', status: 'ok', detail };
  return {
    check: 'clock',
    status: margin >= CLOCK_FAIL_MS ? 'failure' : 'warning',
    detail,
    fix:
      'synchronise both hosts with NTP (chrony, systemd-timesyncd); until then the lease-database locker ' +
      'refuses or warns (maxAllowableDiffFromDBTime) and message ages and retry times are off by the difference',
  };
}
