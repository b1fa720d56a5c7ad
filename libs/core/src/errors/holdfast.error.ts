/**
 * Base of every error Holdfast throws on purpose. `code` is stable and machine-readable;
 * the message says what was wrong, the offending value, and what to do.
 */
export class HoldfastError extends Error {
  constructor(
    message: string,
    readonly code: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A module option failed validation at startup. */
export class InvalidOptionsError extends HoldfastError {
  constructor(
    readonly module: string,
    readonly problems: string[],
  ) {
    super(`Invalid ${module} options:\n  - ${problems.join('\n  - ')}`, 'HOLDFAST_CORE_INVALID_OPTIONS');
  }
}

/** A table prefix that could be spliced into SQL unsafely. */
export class InvalidTablePrefixError extends HoldfastError {
  constructor(readonly value: unknown) {
    super(
      `Invalid table prefix ${JSON.stringify(value)}: it must match ([A-Za-z0-9_]+\\.)*[A-Za-z0-9_]* ` +
        `(letters, digits and underscores, optionally schema-qualified like 'SCHEMA.MYAPP_').`,
      'HOLDFAST_CORE_INVALID_TABLE_PREFIX',
    );
  }
}

/** A duration option that is neither a non-negative number of ms nor a string like '10s'. */
export class InvalidDurationError extends HoldfastError {
  constructor(
    readonly option: string,
    readonly value: unknown,
  ) {
    super(
      `Invalid duration for '${option}': ${JSON.stringify(value)}. ` +
        `Use milliseconds (a non-negative number), a string such as '500ms', '10s', '5m', '1h', or an ISO-8601 duration such as 'PT10M'.`,
      'HOLDFAST_CORE_INVALID_DURATION',
    );
  }
}

/** The dialect of a DataSource could not be determined, or is not supported for execution. */
export class UnsupportedDialectError extends HoldfastError {
  constructor(
    readonly value: unknown,
    detail = '',
  ) {
    super(
      `Unsupported database dialect ${JSON.stringify(value)}${detail ? `: ${detail}` : ''}. ` +
        `Supported: postgres, mysql, mariadb, sqlite (executed), mssql, oracle (SQL generation only). ` +
        `Set the 'dialect' option to override detection.`,
      'HOLDFAST_CORE_UNSUPPORTED_DIALECT',
    );
  }
}

/**
 * A module was started on SQL Server or Oracle. Holdfast generates their SQL (the CLI's `ddl`, the
 * dialects' unit tests) but has never run it against such a server, so a module there could not
 * keep its promises (its tables would be neither created nor checked): it refuses at startup.
 */
export class DialectNotExecutedError extends HoldfastError {
  constructor(
    readonly dialect: string,
    detail: string,
  ) {
    const server = dialect === 'mssql' ? 'SQL Server' : 'Oracle';
    super(
      `Holdfast does not run on ${server} (dialect '${dialect}', ${detail}): its ${server} SQL is generated ` +
        `and unit-tested for its text only, never run against a server, so no module starts on it (its tables ` +
        `would be neither created nor checked). Give the module a PostgreSQL, MySQL/MariaDB or SQLite ` +
        `DataSource. \`holdfast ddl --dialect ${dialect}\` still prints the DDL.`,
      'HOLDFAST_CORE_DIALECT_NOT_EXECUTED',
    );
  }
}

/** A table a module needs is missing and the module was not asked to create it. */
export class SchemaMissingError extends HoldfastError {
  constructor(
    readonly table: string,
    readonly ddl: string,
  ) {
    super(
      `Table ${table} does not exist. Create it with schema: 'create' in the module options, ` +
        `with \`holdfast migrate\` (@holdfast/cli), or by running:\n${ddl}`,
      'HOLDFAST_CORE_SCHEMA_MISSING',
    );
  }
}

/**
 * A live table's column is missing or of a type the module cannot work with. Holdfast never
 * alters a table it did not create, so this stops startup instead of failing every call later.
 */
export class SchemaMismatchError extends HoldfastError {
  constructor(
    readonly table: string,
    readonly column: string,
    /** The live column's type as the database reports it; undefined when the column is missing. */
    readonly found: string | undefined,
    /** The types the module accepts, in the database's DDL. */
    readonly accepted: readonly string[],
    fix: string,
  ) {
    super(
      found === undefined
        ? `Table ${table} has no column ${column} (accepted types: ${accepted.join(', ')}). ${fix}`
        : `Table ${table}, column ${column}: found type ${found}, accepted: ${accepted.join(', ')}. ${fix}`,
      'HOLDFAST_CORE_SCHEMA_MISMATCH',
    );
  }
}

/** The schema step could not take its database lock in time (another instance holds it). */
export class SchemaLockTimeoutError extends HoldfastError {
  constructor(
    readonly table: string,
    readonly waitedMs: number,
    detail: string,
    cause?: unknown,
  ) {
    super(
      `Timed out after ${waitedMs} ms waiting for the schema lock of ${table}: another instance is ` +
        `creating or checking it and has not finished. ${detail}`,
      'HOLDFAST_CORE_SCHEMA_LOCK_TIMEOUT',
      { cause },
    );
  }
}

/** One share of Holdfast's connections on a DataSource, as ConnectionBudgetError lists it. */
export interface ConnectionShare {
  /** What it is for: `lease statements (Simba, locker 'orders')`, `LISTEN for COR_MESSAGE`. */
  readonly what: string;
  readonly connections: number;
}

/**
 * An instance could not open the connections Holdfast needs of its own because the server has no
 * room for them: it stops its startup (nothing of Holdfast's has started), so that the instances
 * already running keep every connection they hold. Names what Holdfast needs, what the server
 * allows and how many are in use.
 */
export class ConnectionBudgetError extends HoldfastError {
  constructor(
    /** Holdfast's connections on this DataSource, share by share. */
    readonly shares: readonly ConnectionShare[],
    /** Connections still to open (the shares not open yet). */
    readonly needed: number,
    /** The server's limits and use, as read (in words), or why they could not be read. */
    readonly server: string,
    /** Connections the server had room for (undefined when it could not be read). */
    readonly free: number | undefined,
    /** How long the instance waited for room (`whenServerFull: 'wait'`), in ms; 0 when it did not. */
    readonly waitedMs: number,
    cause?: unknown,
  ) {
    const list = shares.map((s) => `${s.what}: ${s.connections}`).join('; ');
    const total = shares.reduce((sum, s) => sum + s.connections, 0);
    const opening = needed === total ? '' : ` (${needed} of them not open yet)`;
    super(
      `Holdfast needs ${total} connection(s) of its own on this DataSource${opening}, beside the application's pool: ${list}. ` +
        `The server has no room for them: ${server}` +
        (free === undefined
          ? ''
          : `, so room for ${free}, and Holdfast leaves one of those for the next client to connect`) +
        (cause ? `; it refused a connection: ${String((cause as Error).message ?? cause)}` : '') +
        (waitedMs > 0 ? `; waited ${Math.round(waitedMs / 1000)} s for room (whenServerFull: 'wait')` : '') +
        `. Nothing of Holdfast's started on this instance, and the instances already running keep what they hold. ` +
        `Raise max_connections, run fewer instances, or give Holdfast a pooler of its own ` +
        `(configureCoordinationPool(dataSource, { connection }); README: Pool sizing).`,
      'HOLDFAST_CORE_CONNECTION_BUDGET',
      { cause },
    );
  }
}

/**
 * A wait of a bounded SqlClient (see `SqlClientOptions.statementTimeout`) passed its bound: the
 * wait for a pooled connection, or a statement's answer. A statement that timed out had its
 * connection destroyed; whether the server ran it is unknown (a claim or a write may have
 * committed before the network went silent).
 */
export class SqlTimeoutError extends HoldfastError {
  constructor(
    readonly waitingFor: 'connection' | 'answer',
    readonly timeoutMs: number,
  ) {
    super(
      waitingFor === 'connection'
        ? `No pooled database connection within ${timeoutMs} ms (statementTimeout)`
        : `The database did not answer within ${timeoutMs} ms (statementTimeout); its connection was ` +
            `destroyed, and the next statement opens a new one`,
      'HOLDFAST_CORE_SQL_TIMEOUT',
    );
  }
}

/**
 * A handler decorator on a request-scoped or transient provider (or one that depends on one):
 * Holdfast calls handlers from timers and pollers, where there is no request to build it for.
 */
export class NonStaticHandlerError extends HoldfastError {
  constructor(
    readonly decorator: string,
    readonly declaredOn: string,
  ) {
    super(
      `${decorator} on ${declaredOn}: the provider is not a singleton (it is request-scoped or transient, ` +
        `or depends on such a provider), so there is no instance to call it on outside a request. ` +
        `Put the handler on a default-scoped provider and resolve scoped dependencies inside it with ModuleRef.`,
      'HOLDFAST_CORE_NON_STATIC_HANDLER',
    );
  }
}
