import type { Dialect } from '../dialect/dialect';
import { optionalNumber, type CatalogQuery } from '../schema/catalog-reader';
import { statement } from './statement';

/**
 * What a server allows in client connections, and how many are open now: read before Holdfast
 * opens connections of its own (ConnectionBudget), so that an instance the server has no room for
 * is refused at startup with these figures rather than failing later, and the instances already
 * running keep what they hold.
 */
export interface ServerConnectionLimits {
  /** PostgreSQL and MySQL/MariaDB `max_connections`. */
  maxConnections: number;
  /**
   * Connections the server keeps for administrators (PostgreSQL `superuser_reserved_connections`
   * plus `reserved_connections`; 0 on MySQL/MariaDB, whose one extra administrator connection is
   * beyond `max_connections`). Holdfast leaves them to the administrators, also when it connects
   * as one.
   */
  reserved: number;
  /** Client connections open on the server now, this instance's own included. */
  inUse: number;
  /** The limit of the account Holdfast connects as, when it has one (PostgreSQL `rolconnlimit`, MySQL/MariaDB `max_user_connections`). */
  account?: { name: string; limit: number; inUse: number };
}

/** Connections the limits leave for new clients now (never below 0). */
export function freeConnections(limits: ServerConnectionLimits): number {
  const server = limits.maxConnections - limits.reserved - limits.inUse;
  const account = limits.account ? limits.account.limit - limits.account.inUse : Infinity;
  return Math.max(0, Math.min(server, account));
}

/** The limits in words, for an error message. */
export function describeConnectionLimits(limits: ServerConnectionLimits): string {
  const reserved = limits.reserved ? `, ${limits.reserved} of them reserved for administrators` : '';
  const account = limits.account
    ? `; account ${limits.account.name} may open ${limits.account.limit} and has ${limits.account.inUse} open`
    : '';
  return `max_connections ${limits.maxConnections}${reserved}, ${limits.inUse} in use${account}`;
}

/**
 * The server's connection limits and the connections open now, read through `query`; undefined
 * where Holdfast does not read them (SQLite, SQL Server, Oracle).
 */
export function readConnectionLimits(
  dialect: Dialect,
  query: CatalogQuery,
): Promise<ServerConnectionLimits | undefined> {
  switch (dialect) {
    case 'postgres':
      return readPostgresConnectionLimits(query);
    case 'mysql':
    case 'mariadb':
      return readMysqlConnectionLimits(query);
    default:
      return Promise.resolve(undefined);
  }
}

/** `query`'s rows for `sql` with `params`. */
async function rows<T>(query: CatalogQuery, sql: string, params: unknown[] = []): Promise<T[]> {
  return (await query(statement(sql, params))) as T[];
}

/** PostgreSQL: the settings, client backends in pg_stat_activity, and the role's own limit. */
async function readPostgresConnectionLimits(query: CatalogQuery): Promise<ServerConnectionLimits> {
  const [row] = await rows<Record<string, unknown>>(
    query,
    `SELECT current_setting('max_connections') AS max_connections, ` +
      `current_setting('superuser_reserved_connections') AS superuser_reserved, ` +
      `current_setting('reserved_connections', true) AS reserved, ` +
      `(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend') AS in_use, ` +
      `r.rolname AS account, r.rolconnlimit AS account_limit, ` +
      `(SELECT count(*) FROM pg_stat_activity a WHERE a.usesysid = r.oid AND a.backend_type = 'client backend') AS account_in_use ` +
      `FROM pg_roles r WHERE r.rolname = current_user`,
  );
  const limit = optionalNumber(row.account_limit) ?? -1;
  return {
    maxConnections: Number(row.max_connections),
    reserved: Number(row.superuser_reserved) + (optionalNumber(row.reserved) ?? 0),
    inUse: Number(row.in_use),
    account:
      limit >= 0
        ? { name: String(row.account), limit, inUse: optionalNumber(row.account_in_use) ?? 0 }
        : undefined,
  };
}

/**
 * MySQL/MariaDB: `max_connections`, `Threads_connected`, and `max_user_connections` with the
 * account's own threads (the processlist an account without PROCESS sees is its own).
 */
async function readMysqlConnectionLimits(query: CatalogQuery): Promise<ServerConnectionLimits> {
  const [settings] = await rows<Record<string, unknown>>(
    query,
    'SELECT @@max_connections AS max_connections, @@max_user_connections AS account_limit, ' +
      'CURRENT_USER() AS account',
  );
  const status = await rows<Record<string, unknown>>(query, "SHOW GLOBAL STATUS LIKE 'Threads_connected'");
  const value = (row: Record<string, unknown> | undefined) => row?.Value ?? row?.VALUE;
  const limit = optionalNumber(settings.account_limit) ?? 0;
  let account: ServerConnectionLimits['account'];
  if (limit > 0) {
    const name = String(settings.account);
    const [own] = await rows<Record<string, unknown>>(
      query,
      'SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE USER = ?',
      [name.slice(0, name.lastIndexOf('@'))],
    );
    account = { name, limit, inUse: optionalNumber(own?.n) ?? 0 };
  }
  return {
    maxConnections: Number(settings.max_connections),
    reserved: 0,
    inUse: optionalNumber(value(status[0])) ?? 0,
    account,
  };
}
