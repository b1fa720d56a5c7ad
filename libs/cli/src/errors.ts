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
