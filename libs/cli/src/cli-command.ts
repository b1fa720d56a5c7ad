import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CliUsageError } from './errors';

/** Where a command line reads its environment and writes its output. */
export interface CliIo {
  env: NodeJS.ProcessEnv;
  stdout(text: string): void;
  stderr(text: string): void;
}

/**
 * One `holdfast <name>` command: its usage, and how it runs a command line (the arguments after
 * its name). A new command is one file under commands/ exporting one of these, listed in cli.ts.
 */
export interface CliCommand {
  name: string;
  /** The usage lines `holdfast <name> --help` prints (and `holdfast --help` lists). */
  usage: string;
  /** Resolves with the exit code: 0 done, 1 failed; a CliUsageError is exit 2. */
  run(args: string[], io: CliIo): Promise<number>;
}

type Spec = NonNullable<ParseArgsConfig['options']>;
type Parsing<S extends Spec, P extends boolean> = {
  args: string[];
  options: S;
  strict: true;
  allowPositionals: P;
};
export const prefixOption = { type: 'string' } as const;
export const jsonOption = { type: 'boolean' } as const;
export const maxRetriesOption = { type: 'string' } as const;
export const dryRunOption = { type: 'boolean' } as const;

/** The command's options (strict: an unknown one is a usage error). */
export function parseOptions<S extends Spec, P extends boolean = false>(
  args: string[],
  options: S,
  positionals?: P,
): ReturnType<typeof parseArgs<Parsing<S, P>>> {
  try {
    return parseArgs<Parsing<S, P>>({
      args,
      options,
      strict: true,
      allowPositionals: (positionals ?? false) as P,
    });
  } catch (error) {
    throw new CliUsageError((error as Error).message);
  }
}

/** A whole number ≥ 0 given for `option`, or undefined when absent. */
export function count(option: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new CliUsageError(`${option} must be a whole number, got '${value}'`);
  return Number(value);
}

/** The inbox's maxRetries: --max-retries (or its old name), else HOLDFAST_INBOX_MAX_RETRIES. */
export function inboxMaxRetries(
  io: CliIo,
  values: { 'max-retries'?: string; 'inbox-max-retries'?: string },
): number | undefined {
  if (values['max-retries'] !== undefined) return count('--max-retries', values['max-retries']);
  if (values['inbox-max-retries'] !== undefined)
    return count('--inbox-max-retries', values['inbox-max-retries']);
  return count('HOLDFAST_INBOX_MAX_RETRIES', io.env.HOLDFAST_INBOX_MAX_RETRIES);
}

/** Where a database command works: DATABASE_URL, and the table prefix from --prefix, else HOLDFAST_TABLE_PREFIX. */
export function databaseOf(
  io: CliIo,
  values: { prefix?: string },
): { url: string | undefined; prefix: string | undefined } {
  return { url: io.env.DATABASE_URL, prefix: values.prefix ?? io.env.HOLDFAST_TABLE_PREFIX };
}

/** `value` as JSON with --json, else the text. */
export function output(io: CliIo, json: boolean | undefined, value: unknown, text: () => string): void {
  io.stdout(json ? `${JSON.stringify(value, null, 2)}\n` : text());
}

export const lockTableOptions = {
  'lock-table': { type: 'string' },
  'lock-columns': { type: 'string' },
} as const;

/**
 * The lock table when it is not Holdfast's own: --lock-table NAME (LockerModule's `lockTableName`,
 * without the prefix) and --lock-columns ID,TIME,BROKER_NAME (its `lockColumns`, in that order).
 */
export function lockTableOf(values: { 'lock-table'?: string; 'lock-columns'?: string }): {
  lockTableName?: string;
  lockColumns?: { id: string; time: string; brokerName: string };
} {
  const columns = values['lock-columns']?.split(',').map((c) => c.trim());
  if (columns && (columns.length !== 3 || columns.some((c) => !c))) {
    throw new CliUsageError(
      `--lock-columns takes the id, time and holder columns, comma-separated (e.g. ID,TIME,BROKER_NAME), got '${values['lock-columns']}'`,
    );
  }
  return {
    ...(values['lock-table'] !== undefined ? { lockTableName: values['lock-table'] } : {}),
    ...(columns ? { lockColumns: { id: columns[0], time: columns[1], brokerName: columns[2] } } : {}),
  };
}
