import { redact } from '../../database-url';

/** A check's verdict: fine, worth a look, or something that breaks Holdfast. */
export type DoctorStatus = 'ok' | 'warning' | 'failure' | 'skipped';

/** One check of `holdfast doctor`: what it looked at, what it found and, unless ok, how to fix it. */
export interface DoctorCheck {
  /** A stable key: `connect`, `clock`, `read-only`, `pgbouncer`, `listen`, `schema`, `connections`, `galera`. */
  check: string;
  status: DoctorStatus;
  /** What was found, with the figures. */
  detail: string;
  /** What to do about it (absent when ok or skipped). */
  fix?: string;
}

export interface DoctorReport {
  /** DATABASE_URL, its password hidden. */
  database: string;
  dialect: string | null;
  prefix: string;
  checks: DoctorCheck[];
  /** The worst status found: ok, warning or failure (skipped checks count as ok). */
  status: 'ok' | 'warning' | 'failure';
}

/** The report of the checks run on `url` (the worst status of its checks). */
export function doctorReport(
  url: string | undefined,
  prefix: string,
  dialect: string | null,
  checks: DoctorCheck[],
): DoctorReport {
  return {
    database: url ? redact(url) : '',
    dialect,
    prefix,
    checks,
    status: checks.some((c) => c.status === 'failure')
      ? 'failure'
      : checks.some((c) => c.status === 'warning')
        ? 'warning'
        : 'ok',
  };
}

/** The report as text: one line per check, then the fixes. */
export function formatDoctor(report: DoctorReport): string {
  const mark: Record<DoctorStatus, string> = {
    ok: 'ok  ',
    warning: 'WARN',
    failure: 'FAIL',
    skipped: 'skip',
  };
  const lines = [
    `holdfast doctor: ${report.database || 'no database'}${report.dialect ? ` (${report.dialect})` : ''}, prefix '${report.prefix}'`,
  ];
  for (const c of report.checks) {
    lines.push(`${mark[c.status]} ${c.check}: ${c.detail}`);
    if (c.fix) lines.push(`     fix: ${c.fix}`);
  }
  const counts = (s: DoctorStatus) => report.checks.filter((c) => c.status === s).length;
  lines.push(
    `${report.status}: ${counts('failure')} failure(s), ${counts('warning')} warning(s), ${counts('ok')} ok`,
  );
  return `${lines.join('\n')}\n`;
}

/** The exit code of a report: 0 every check ok, 1 a warning at worst, 2 a failure. */
export function doctorExitCode(report: DoctorReport): number {
  return report.status === 'failure' ? 2 : report.status === 'warning' ? 1 : 0;
}
