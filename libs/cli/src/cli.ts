import { HoldfastError, InvalidTablePrefixError } from '@holdfast/core/kit';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CliCommand, CliIo } from './cli-command';
import { ddl } from './commands/ddl.command';
import { doctor } from './commands/doctor.command';
import { messages } from './commands/messages.command';
import { migrate } from './commands/migrate.command';
import { release } from './commands/release.command';
import { status } from './commands/status.command';
import { redact } from './database-url';
import { CliUsageError } from './errors';

export type { CliCommand, CliIo } from './cli-command';

/** Every `holdfast` command, in the order `holdfast --help` lists them (one file each in commands/). */
const COMMANDS: readonly CliCommand[] = [ddl, migrate, status, messages, release, doctor];

const COMMON = `Every command takes --json (the result as JSON on stdout; an error as {"error": {"code",
"message"}}). Exit code: 0 done, 1 failed (or a message not found, a lock not released), 2 bad usage.
Changes (messages retry|pause|resume|delete, release) print one audit line on stderr: who
(HOLDFAST_ACTOR, else the OS user@host), what, how many.
DATABASE_URL: postgres://user:pass@host:5432/db, mysql://…, mariadb://…, or sqlite:<file>
Table prefix: --prefix, else HOLDFAST_TABLE_PREFIX, else none.
The inbox's maxRetries: --max-retries, else HOLDFAST_INBOX_MAX_RETRIES.
`;

export const USAGE = `usage: holdfast <command> [options]   (holdfast <command> --help for one)

${COMMANDS.map((c) => c.usage).join('')}  --version   the CLI's version

${COMMON}`;

/** One command's usage (`holdfast status --help`). */
function commandUsage(command: CliCommand): string {
  return `usage: holdfast ${command.usage.trimStart()}\n${COMMON}`;
}

const commandNamed = (name: string | undefined): CliCommand | undefined =>
  COMMANDS.find((c) => c.name === name);

const processIo: CliIo = {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/** The version of this package (package.json beside src/ and dist/). */
export function cliVersion(): string {
  return (JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string })
    .version;
}

/** Runs one `holdfast` command line; resolves with the process exit code (0, 1 failure, 2 usage). */
export async function runCli(argv: string[], io: CliIo = processIo): Promise<number> {
  const [name, ...args] = argv;
  const command = commandNamed(name);
  try {
    if (command) {
      if (args.includes('--help') || args.includes('-h')) {
        io.stdout(commandUsage(command));
        return 0;
      }
      return await command.run(args, io);
    }
    return builtIn(name, args, io);
  } catch (error) {
    return failed(error, command, name, args, io);
  }
}

/** version, help, and no command at all. */
function builtIn(name: string | undefined, args: string[], io: CliIo): number {
  switch (name) {
    case '--version':
    case '-v':
    case 'version':
      io.stdout(`${cliVersion()}\n`);
      return 0;
    case 'help': {
      const command = commandNamed(args[0]);
      io.stdout(command ? commandUsage(command) : USAGE);
      return 0;
    }
    case undefined:
    case '--help':
    case '-h':
      io.stdout(USAGE);
      return name === undefined ? 2 : 0;
    default:
      throw new CliUsageError(`unknown command '${name}'`);
  }
}

/** Prints an error (as JSON with --json) and returns its exit code: 2 bad usage, else 1. */
function failed(
  error: unknown,
  command: CliCommand | undefined,
  name: string | undefined,
  args: string[],
  io: CliIo,
): number {
  const usage = error instanceof CliUsageError;
  // Driver messages may quote the URL: never print its password.
  const message = redactUrls(error instanceof Error ? error.message : String(error));
  const code = errorCode(error);
  // Known without parsing, so that even a usage error answers in JSON.
  if (args.includes('--json')) io.stdout(`${JSON.stringify({ error: { code, message } }, null, 2)}\n`);
  else if (usage) io.stderr(`holdfast: ${message}\n${command ? commandUsage(command) : USAGE}`);
  else io.stderr(`holdfast ${name}: ${message}${code ? ` [${code}]` : ''}\n`);
  return usage || error instanceof InvalidTablePrefixError ? 2 : 1;
}

/** A HoldfastError's code, else a driver's (ECONNREFUSED, SQLITE_…, ER_…), else null. */
function errorCode(error: unknown): string | null {
  if (error instanceof HoldfastError) return error.code;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : null;
}

function redactUrls(text: string): string {
  return text.replace(/[a-z]+:\/\/\S+/gi, (url) => redact(url));
}
