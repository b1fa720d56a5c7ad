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
