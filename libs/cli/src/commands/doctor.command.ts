import {
  Catalog,
  checkLiveTable,
  describeConnectionLimits,
  freeConnections,
  indexName,
  LiveTable,
  PgListener,
  readConnectionLimits,
  statement,
  tableName,
  validateTablePrefix,
  withTimeout,
  type SqlClient,
  type TableSpec,
} from '@holdfast/core/kit';
import { accessSync, constants } from 'node:fs';
import { dirname } from 'node:path';
import type { DataSource } from 'typeorm';
import {
  count,
  databaseOf,
  jsonOption,
  output,
  parseOptions,
  prefixOption,
  type CliCommand,
} from '../cli-command';
import { withDatabase } from '../database';
import { redact } from '../database-url';
import { CliUsageError } from '../errors';
import { HOLDFAST_TABLES } from '../tables';

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

/** The lockers of @holdfast/locker, as `--locker` names them. */
export const DOCTOR_LOCKERS = ['lease-database', 'database', 'shared-file', 'custom'] as const;

export interface DoctorOptions {
  url: string | undefined;
  prefix?: string;
  /** The locker type the application's LockerModule uses (the Galera check depends on it). */
  locker?: string;
  /** How many instances of the application share the server (the connection budget). */
  instances?: number;
  /** The application's own pool size per instance (TypeORM's default for pg and mysql2: 10). */
  poolSize?: number;
  /** Holdfast's own connections per instance (lanes and LISTEN; default 3: lease, one inbox, LISTEN). */
  holdfastConnections?: number;
  /** Clock difference from which the clock check warns, in ms (default 1000). */
  clockWarnMs?: number;
  /** The URL the inbox's LISTEN connection uses (InboxModule notifyListenUrl); default the DataSource's. */
  listenUrl?: string;
  /** How long the LISTEN check waits for its notification, in ms (default 3000). */
  listenTimeoutMs?: number;
}

const DEFAULT_POOL = 10;
const DEFAULT_HOLDFAST_CONNECTIONS = 3;
const DEFAULT_CLOCK_WARN_MS = 1_000;
/** A difference past which leases and timestamps are wrong by more than a lease's margin. */
const CLOCK_FAIL_MS = 5_000;

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
  const report = (dialect: string | null, checks: DoctorCheck[]): DoctorReport => ({
    database: options.url ? redact(options.url) : '',
    dialect,
    prefix,
    checks,
    status: checks.some((c) => c.status === 'failure')
      ? 'failure'
      : checks.some((c) => c.status === 'warning')
        ? 'warning'
        : 'ok',
  });
  try {
    return await withDatabase(options.url, true, async (sql, dataSource) => {
      const checks: DoctorCheck[] = [
        { check: 'connect', status: 'ok', detail: `connected to ${sql.dialect.name}` },
      ];
      const run = async (check: string, probe: () => Promise<DoctorCheck | DoctorCheck[]>) => {
        try {
          checks.push(...[await probe()].flat());
        } catch (error) {
          checks.push({
            check,
            status: 'warning',
            detail: `could not check: ${error instanceof Error ? error.message : String(error)}`,
            fix: 'give the account Holdfast connects as the right to read this (see the detail), then run doctor again',
          });
        }
      };
      await run('clock', () => clockCheck(sql, options.clockWarnMs ?? DEFAULT_CLOCK_WARN_MS));
      await run('read-only', () => readOnlyCheck(sql, dataSource));
      if (sql.dialect.name === 'postgres') {
        await run('pgbouncer', () => pgbouncerCheck(dataSource));
        await run('listen', () =>
          listenCheck(sql, dataSource, options.listenTimeoutMs ?? 3_000, options.listenUrl),
        );
      }
      await run('schema', () => schemaChecks(sql, prefix));
      await run('connections', () => connectionsCheck(sql, options));
      if (sql.dialect.name === 'mysql' || sql.dialect.name === 'mariadb')
        await run('galera', () => galeraCheck(sql, options.locker));
      return report(sql.dialect.name, checks);
    });
  } catch (error) {
    if (error instanceof CliUsageError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    return report(null, [
      {
        check: 'connect',
        status: 'failure',
        detail: message,
        fix: 'check DATABASE_URL (host, port, database, credentials) and that the server is up and reachable from here',
      },
    ]);
  }
}

async function one(sql: SqlClient, text: string): Promise<Record<string, unknown>> {
  const [row] = (await sql.query(statement(text))) as Record<string, unknown>[];
  return row ?? {};
}

/** The first value of a row whose keys a driver may upper- or lower-case. */
function field(row: Record<string, unknown>, name: string): unknown {
  const key = Object.keys(row).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : row[key];
}

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

/**
 * A "primary" that cannot be written: a standby after a failover (PostgreSQL in recovery, MySQL/
 * MariaDB read_only), or a SQLite file this process may not write.
 */
async function readOnlyCheck(sql: SqlClient, dataSource: DataSource): Promise<DoctorCheck> {
  const fix =
    'point DATABASE_URL (and the application) at the writable primary: after a failover the old ' +
    'primary or a replica refuses every lease renewal, claim and acceptance';
  switch (sql.dialect.name) {
    case 'postgres': {
      const row = await one(
        sql,
        "SELECT pg_is_in_recovery() AS recovery, current_setting('default_transaction_read_only') AS read_only",
      );
      const recovery = field(row, 'recovery') === true;
      const readOnly = String(field(row, 'read_only')) === 'on';
      if (!recovery && !readOnly)
        return { check: 'read-only', status: 'ok', detail: 'the server accepts writes' };
      return {
        check: 'read-only',
        status: 'failure',
        detail: recovery
          ? 'the server is a standby in recovery (pg_is_in_recovery() is true): it refuses every write'
          : 'default_transaction_read_only is on: every transaction is read-only',
        fix,
      };
    }
    case 'mysql':
    case 'mariadb': {
      const row = await one(
        sql,
        'SELECT @@global.read_only AS read_only, @@innodb_read_only AS innodb_read_only',
      );
      const readOnly = Number(field(row, 'read_only')) === 1;
      const innodb = Number(field(row, 'innodb_read_only')) === 1;
      if (!readOnly && !innodb)
        return { check: 'read-only', status: 'ok', detail: 'the server accepts writes' };
      return {
        check: 'read-only',
        status: 'failure',
        detail: innodb
          ? 'innodb_read_only is ON: no InnoDB table can be written'
          : 'read_only is ON (a replica, or a primary demoted by the failover tool): only SUPER/READ_ONLY ADMIN may write',
        fix,
      };
    }
    case 'sqlite': {
      const file = dataSource.options.database as string;
      const problems: string[] = [];
      for (const [path, what] of [
        [file, 'the database file'],
        [dirname(file), 'its directory (SQLite writes its journal or WAL beside it)'],
      ] as const) {
        try {
          accessSync(path, constants.W_OK);
        } catch {
          problems.push(`${what} ${path} is not writable by this user`);
        }
      }
      if (!problems.length)
        return { check: 'read-only', status: 'ok', detail: 'the file and its directory are writable' };
      return {
        check: 'read-only',
        status: 'failure',
        detail: problems.join('; '),
        fix: 'run the application as a user that may write the file and its directory, on a writable mount',
      };
    }
    default:
      return { check: 'read-only', status: 'skipped', detail: `not checked on ${sql.dialect.name}` };
  }
}

/**
 * PgBouncer in transaction (or statement) mode hands each transaction of one client connection to
 * whichever server connection is free: a session's LISTEN, advisory locks, SET and prepared
 * statements do not survive. Seen from a client as a server process id that changes between
 * transactions of one connection. An idle bouncer hands a client the same server connection
 * again (the last one freed), so two client connections hold a transaction each and end them in
 * turn: the next transaction of the first lands on the second's server connection.
 */
async function pgbouncerCheck(dataSource: DataSource): Promise<DoctorCheck> {
  const x = dataSource.createQueryRunner();
  const y = dataSource.createQueryRunner();
  const pid = async (runner: typeof x) =>
    Number((await runner.query('SELECT pg_backend_pid() AS pid'))[0].pid);
  const seen: number[] = [];
  try {
    for (const [first, second] of [
      [x, y],
      [y, x],
    ] as const) {
      await x.query('BEGIN');
      seen.push(await pid(x));
      await y.query('BEGIN');
      await pid(y);
      await first.query('COMMIT');
      await second.query('COMMIT');
      seen.push(await pid(x));
    }
  } finally {
    await x.release();
    await y.release();
  }
  if (new Set(seen).size === 1) {
    return {
      check: 'pgbouncer',
      status: 'ok',
      detail: `one server process (pid ${seen[0]}) served every transaction of one connection: a direct connection or session pooling`,
    };
  }
  return {
    check: 'pgbouncer',
    status: 'warning',
    detail: `the transactions of one connection ran on server processes ${[...new Set(seen)].join(', ')}: a pooler in transaction mode (PgBouncer pool_mode=transaction)`,
    fix:
      "Holdfast's statements work through it, but not LISTEN (see the listen check): give the inbox's listener a " +
      'direct connection or a session-mode pool (InboxModule notifyListenUrl), and the coordination lanes a ' +
      'PgBouncer database of their own (docs/operations.md, Pool sizing)',
  };
}

/**
 * The path the inbox's wake-ups take: LISTEN on a dedicated connection (the inbox's own
 * PgListener, on `listenUrl` when the application sets `notifyListenUrl`), NOTIFY through the
 * DataSource, heard within the timeout. Behind a transaction-mode pooler the LISTEN succeeds and
 * hears nothing, and delivery falls back to polling.
 */
async function listenCheck(
  sql: SqlClient,
  dataSource: DataSource,
  timeoutMs: number,
  listenUrl: string | undefined,
): Promise<DoctorCheck> {
  const channel = `holdfast_doctor_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const through = listenUrl ? `through ${redact(listenUrl)}` : "on the DataSource's connection options";
  const fix =
    "give the inbox's LISTEN a connection to the server itself or to a session-mode pool " +
    '(InboxModule notifyListenUrl; check it with doctor --listen-url): until then delivery wakes only at its poll interval';
  let heard!: () => void;
  const notified = new Promise<void>((resolve) => (heard = resolve));
  const listener = new PgListener(dataSource, {
    channel,
    connectionString: listenUrl,
    applicationName: 'holdfast doctor',
    connectTimeoutMs: timeoutMs,
    onNotification: () => heard(),
    onDropped: () => undefined,
  });
  try {
    await listener.listen();
    await sql.query(statement(`SELECT pg_notify('${channel}', 'doctor')`));
    const ok = await withTimeout(
      notified.then(() => true),
      timeoutMs,
      () => false,
    );
    if (ok)
      return {
        check: 'listen',
        status: 'ok',
        detail: `a NOTIFY through the DataSource was heard by LISTEN ${through}`,
      };
    return {
      check: 'listen',
      status: 'warning',
      detail: `a NOTIFY through the DataSource was not heard within ${timeoutMs} ms by LISTEN ${through}`,
      fix,
    };
  } catch (error) {
    return {
      check: 'listen',
      status: 'warning',
      detail: `LISTEN ${through} failed: ${error instanceof Error ? error.message : String(error)}`,
      fix,
    };
  } finally {
    await listener.close();
  }
}

/** Each Holdfast table under the prefix against what its module expects: columns, types, indexes. */
async function schemaChecks(sql: SqlClient, prefix: string): Promise<DoctorCheck[]> {
  const catalog = Catalog.of(sql);
  const found: { spec: TableSpec; table: string }[] = [];
  const absent: string[] = [];
  for (const spec of HOLDFAST_TABLES) {
    const table = tableName(prefix, spec.name);
    if (await catalog.tableExists(table)) found.push({ spec, table });
    else absent.push(table);
  }
  const checks: DoctorCheck[] = absent.length
    ? [
        {
          check: 'schema',
          status: 'skipped',
          detail: `${absent.join(', ')} not created: the modules that use them are not used here (or create them with \`holdfast migrate\`)`,
        },
      ]
    : [];
  if (!found.length) {
    return [
      {
        check: 'schema',
        status: 'warning',
        detail: `no Holdfast table under prefix '${prefix}' (${HOLDFAST_TABLES.map((s) => tableName(prefix, s.name)).join(', ')})`,
        fix: "check --prefix (or HOLDFAST_TABLE_PREFIX); create the tables with `holdfast migrate`, or let the modules create theirs (schema 'create')",
      },
    ];
  }
  for (const { spec, table } of found) {
    const columns = (await catalog.columns(table)) ?? [];
    try {
      checkLiveTable(sql.dialect, spec, new LiveTable(table, true, columns));
    } catch (error) {
      checks.push({
        check: 'schema',
        status: 'failure',
        detail: `${table}: ${error instanceof Error ? error.message : String(error)}`,
        fix: 'the module refuses to start on this table (schema check): alter the column as the detail says',
      });
      continue;
    }
    const indexes = new Set(((await catalog.indexes(table)) ?? []).map((i) => i.name.toLowerCase()));
    const missing = (spec.indexes ?? [])
      .map((index) => indexName(prefix, index))
      .filter((name) => !indexes.has(name.toLowerCase()));
    if (missing.length) {
      checks.push({
        check: 'schema',
        status: 'warning',
        detail: `${table}: index(es) ${missing.join(', ')} missing: the statements that use them scan the table`,
        fix: `create them from \`holdfast ddl --dialect ${sql.dialect.name}${prefix ? ` --prefix ${prefix}` : ''}\``,
      });
      continue;
    }
    checks.push({ check: 'schema', status: 'ok', detail: `${table}: every column and index as expected` });
  }
  return checks;
}

/**
 * The connection budget: what the server allows against what the instances need (each its pool
 * plus Holdfast's own connections), and whether one more instance would be admitted now.
 */
async function connectionsCheck(sql: SqlClient, options: DoctorOptions): Promise<DoctorCheck> {
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

/**
 * Galera (MariaDB Galera Cluster, Percona XtraDB Cluster): a row lock is local to the node that
 * took it, so the `database` locker's held SELECT … FOR UPDATE lets one master per node.
 */
async function galeraCheck(sql: SqlClient, locker: string | undefined): Promise<DoctorCheck> {
  const rows = (await sql.query(statement("SHOW GLOBAL STATUS LIKE 'wsrep_cluster_size'"))) as Record<
    string,
    unknown
  >[];
  const size = Number(field(rows[0] ?? {}, 'Value') ?? 0);
  if (!size)
    return { check: 'galera', status: 'ok', detail: 'not a Galera cluster node (no wsrep_cluster_size)' };
  const detail = `a Galera cluster node (wsrep_cluster_size ${size})`;
  const fix =
    "use the 'lease-database' locker (LockerModule locker: { type: 'lease-database' }): Galera does not " +
    "replicate row locks, so the 'database' locker's SELECT … FOR UPDATE makes one master per node";
  if (locker === 'database')
    return { check: 'galera', status: 'failure', detail: `${detail} and the 'database' locker`, fix };
  if (locker === undefined)
    return {
      check: 'galera',
      status: 'warning',
      detail: `${detail}; which locker the application uses is not known here (--locker)`,
      fix,
    };
  return { check: 'galera', status: 'ok', detail: `${detail} with the '${locker}' locker` };
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

export const doctor: CliCommand = {
  name: 'doctor',
  usage: `  doctor [--prefix P] [--locker ${DOCTOR_LOCKERS.join('|')}] [--instances N] [--pool-size N]
         [--listen-url URL]
      check what breaks Holdfast in production and say how to fix it: the clocks, a read-only
      primary, PgBouncer in transaction mode and the LISTEN path (through URL: the inbox's
      notifyListenUrl), schema drift, the connection budget (N instances with pools of N), Galera
      with the 'database' locker. Read-only. Exit code 0 all ok, 1 warnings, 2 a failure
`,
  async run(args, io) {
    const { values } = parseOptions(args, {
      prefix: prefixOption,
      json: jsonOption,
      locker: { type: 'string' },
      instances: { type: 'string' },
      'pool-size': { type: 'string' },
      'listen-url': { type: 'string' },
    });
    const report = await doctorCommand({
      ...databaseOf(io, values),
      locker: values.locker,
      instances: count('--instances', values.instances),
      poolSize: count('--pool-size', values['pool-size']),
      listenUrl: values['listen-url'],
    });
    output(io, values.json, report, () => formatDoctor(report));
    return doctorExitCode(report);
  },
};
