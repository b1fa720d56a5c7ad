import { HoldfastError } from '@holdfast/core/kit';

/** The command line asked for something the CLI does not have (exit code 2, with the usage). */
export class CliUsageError extends HoldfastError {
  constructor(message: string) {
    super(message, 'HOLDFAST_CLI_USAGE');
  }
}

/** DATABASE_URL is missing or names a database the CLI cannot open. */
export class InvalidDatabaseUrlError extends HoldfastError {
  constructor(message: string) {
    super(message, 'HOLDFAST_CLI_DATABASE_URL');
  }
}

/** A command that works on the inbox's messages found no `<prefix>COR_MESSAGE` table. */
export class InboxTableMissingError extends HoldfastError {
  constructor(readonly table: string) {
    super(
      `there is no table ${table} (the inbox's messages): check DATABASE_URL and --prefix`,
      'HOLDFAST_CLI_NO_INBOX_TABLE',
    );
  }
}

/** `holdfast messages history` on an inbox whose `history` option was never on (no history table). */
export class HistoryTableMissingError extends HoldfastError {
  constructor(readonly table: string) {
    super(
      `there is no table ${table} (the inbox's history): turn on InboxModule's \`history\` option ` +
        `(the table is made with schema: 'create' or \`holdfast migrate\`), or check DATABASE_URL and --prefix`,
      'HOLDFAST_CLI_NO_HISTORY_TABLE',
    );
  }
}

/** DATABASE_URL names a database the command could not connect to or open. */
export class DatabaseUnreachableError extends HoldfastError {
  constructor(
    readonly url: string,
    cause: unknown,
  ) {
    super(
      `cannot open ${url}: ${cause instanceof Error ? cause.message : String(cause)}`,
      'HOLDFAST_CLI_DATABASE_UNREACHABLE',
    );
  }
}

/**
 * A command that reads the Holdfast tables found none under the prefix: a mistyped prefix (or
 * database) would otherwise read as an empty system.
 */
export class NoHoldfastTablesError extends HoldfastError {
  constructor(
    readonly prefix: string,
    readonly prefixesFound: readonly string[],
  ) {
    const found = prefixesFound.length
      ? `; this database has Holdfast tables under ${prefixesFound.map((p) => (p ? `'${p}'` : 'no prefix')).join(', ')}`
      : '; this database has no Holdfast table under any prefix';
    super(
      `there is no Holdfast table under ${prefix ? `prefix '${prefix}'` : 'no prefix'} (simba_mutex, ` +
        `HOLDFAST_LOCK, COR_MESSAGE, FAILOVER_STORE)${found}: check DATABASE_URL and --prefix ` +
        `(or HOLDFAST_TABLE_PREFIX), or create them with holdfast migrate`,
      'HOLDFAST_CLI_NO_TABLES',
    );
  }
}

/** `--type` names a message type of which the inbox holds no message at all (in any status). */
export class UnknownMessageTypeError extends HoldfastError {
  constructor(
    readonly type: string,
    readonly typesHeld: readonly { type: string; count: number }[],
  ) {
    const held = typesHeld.length
      ? `it holds ${typesHeld.map((t) => `${t.type} (${t.count})`).join(', ')}`
      : 'it holds no message';
    super(
      `the inbox holds no message of type '${type}': ${held}. A type is written namespace:name, ` +
        `with @revision when it has one (a name alone matches it in any namespace)`,
      'HOLDFAST_CLI_UNKNOWN_TYPE',
    );
  }
}
