import { validateTablePrefix } from '@holdfast/core/kit';
import { withDatabase } from '../../database';
import { CliUsageError } from '../../errors';
import { runDoctorChecks } from './doctor-checks';
import { DOCTOR_LOCKERS, type DoctorOptions } from './doctor-options';
import { doctorReport, type DoctorReport } from './doctor-report';

/**
 * `holdfast doctor`: checks what breaks Holdfast in production on DATABASE_URL and says how to fix
 * it. Read-only: it creates nothing (the LISTEN check sends one NOTIFY on a channel of its own).
 * A database it cannot reach is a failed `connect` check, not an error.
 */
export async function doctorCommand(options: DoctorOptions): Promise<DoctorReport> {
  const prefix = options.prefix ?? '';
  validateTablePrefix(prefix);
  if (options.locker !== undefined && !(DOCTOR_LOCKERS as readonly string[]).includes(options.locker)) {
    throw new CliUsageError(`--locker must be one of ${DOCTOR_LOCKERS.join(', ')}, got '${options.locker}'`);
  }
  try {
    return await withDatabase(options.url, true, async (sql, dataSource) => {
      const checks = await runDoctorChecks({ sql, dataSource, prefix, options });
      return doctorReport(options.url, prefix, sql.dialect.name, checks);
    });
  } catch (error) {
    if (error instanceof CliUsageError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    return doctorReport(options.url, prefix, null, [
      {
        check: 'connect',
        status: 'failure',
        detail: message,
        fix: 'check DATABASE_URL (host, port, database, credentials) and that the server is up and reachable from here',
      },
    ]);
  }
}
