import { HoldfastError, InvalidTablePrefixError } from '@holdfast/core/kit';
import { parseArgs } from 'node:util';
import { ddlCommand } from './commands/ddl.command';
import { migrateCommand } from './commands/migrate.command';
import { statusCommand } from './commands/status.command';
import { formatStatus } from './status/status-table';
import { redact } from './database-url';
import { CliUsageError } from './errors';

export const USAGE = `usage: holdfast <command> [options]

  ddl --dialect <postgres|mysql|mariadb|sqlite|mssql|oracle> [--prefix P]
      print the DDL of every Holdfast table and index
  migrate [--prefix P] [--migrations-table NAME]
      create the Holdfast tables on DATABASE_URL (TypeORM migrations; the ones already run are skipped)
  status [--prefix P] [--json] [--inbox-max-retries N]
      what the tables on DATABASE_URL say now: mutex owners, masters, inbox counts, live failover entries
      (--inbox-max-retries: your InboxModule's maxRetries, default 5, which tells parked from due)

DATABASE_URL: postgres://user:pass@host:5432/db, mysql://…, mariadb://…, or sqlite:<file>
Table prefix: --prefix, else HOLDFAST_TABLE_PREFIX, else none.
`;

export interface CliIo {
  env: NodeJS.ProcessEnv;
  stdout(text: string): void;
  stderr(text: string): void;
}

const processIo: CliIo = {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

type Spec = NonNullable<Parameters<typeof parseArgs>[0]>['options'];
const COMMANDS = {
  ddl: { dialect: { type: 'string' }, prefix: { type: 'string' } },
  migrate: { prefix: { type: 'string' }, 'migrations-table': { type: 'string' } },
  status: { prefix: { type: 'string' }, json: { type: 'boolean' }, 'inbox-max-retries': { type: 'string' } },
} satisfies Record<string, Spec>;

function parse<S extends Spec>(args: string[], options: S) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new CliUsageError((error as Error).message);
  }
}

/** A whole number ≥ 0 given for `option`, or undefined when absent. */
function count(option: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new CliUsageError(`${option} must be a whole number, got '${value}'`);
  return Number(value);
}

/** Where a database command works: DATABASE_URL, and the table prefix from --prefix, else HOLDFAST_TABLE_PREFIX. */
function database(
  io: CliIo,
  values: { prefix?: string },
): { url: string | undefined; prefix: string | undefined } {
  return { url: io.env.DATABASE_URL, prefix: values.prefix ?? io.env.HOLDFAST_TABLE_PREFIX };
}

/** Runs one `holdfast` command line; resolves with the process exit code (0, 1 failure, 2 usage). */
export async function runCli(argv: string[], io: CliIo = processIo): Promise<number> {
  const [command, ...args] = argv;
  try {
    switch (command) {
      case 'ddl': {
        const values = parse(args, COMMANDS.ddl);
        io.stdout(ddlCommand({ dialect: values.dialect, prefix: values.prefix }));
        return 0;
      }
      case 'migrate': {
        const values = parse(args, COMMANDS.migrate);
        const ran = await migrateCommand({
          ...database(io, values),
          migrationsTable: values['migrations-table'],
        });
        io.stdout(
          ran.length
            ? ran.map((name) => `holdfast migrate: ran ${name}\n`).join('')
            : 'holdfast migrate: nothing to run, every Holdfast migration has run\n',
        );
        return 0;
      }
      case 'status': {
        const values = parse(args, COMMANDS.status);
        const status = await statusCommand({
          ...database(io, values),
          inboxMaxRetries: count('--inbox-max-retries', values['inbox-max-retries']),
        });
        io.stdout(values.json ? `${JSON.stringify(status, null, 2)}\n` : formatStatus(status));
        return 0;
      }
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        io.stdout(USAGE);
        return command === undefined ? 2 : 0;
      default:
        throw new CliUsageError(`unknown command '${command}'`);
    }
  } catch (error) {
    if (error instanceof CliUsageError) {
      io.stderr(`holdfast: ${error.message}\n${USAGE}`);
      return 2;
    }
    const message = error instanceof Error ? error.message : String(error);
    const code = error instanceof HoldfastError ? ` [${error.code}]` : '';
    // Driver messages may quote the URL: never print its password.
    io.stderr(`holdfast ${command}: ${redactUrls(message)}${code}\n`);
    return error instanceof InvalidTablePrefixError ? 2 : 1;
  }
}

function redactUrls(text: string): string {
  return text.replace(/[a-z]+:\/\/\S+/gi, (url) => redact(url));
}
