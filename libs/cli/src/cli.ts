import { HoldfastError, InvalidTablePrefixError } from '@holdfast/core/kit';
import { parseMessageTypeLabel } from '@holdfast/inbox';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ddlCommand } from './commands/ddl.command';
import { doctorCommand, doctorExitCode, formatDoctor, DOCTOR_LOCKERS } from './commands/doctor.command';
import {
  listMessagesCommand,
  MESSAGE_ACTIONS,
  messagesCommand,
  type MessageAction,
  type MessagesReport,
  type TypeSelection,
} from './commands/messages.command';
import { defaultMigrationsTable, migrateCommand } from './commands/migrate.command';
import { releaseCommand } from './commands/release.command';
import { statusCommand } from './commands/status.command';
import { formatMessages, formatRelease } from './admin-table';
import { auditMessages, auditRelease } from './audit';
import { formatStatus } from './status/status-table';
import { redact } from './database-url';
import { CliUsageError } from './errors';

/** Each command's usage, as `holdfast <command> --help` prints it. */
export const COMMAND_USAGE = {
  ddl: `  ddl --dialect <postgres|mysql|mariadb|sqlite|mssql|oracle> [--prefix P]
      print the DDL of every Holdfast table and index
`,
  migrate: `  migrate [--prefix P] [--migrations-table NAME]
      create the Holdfast tables on DATABASE_URL (TypeORM migrations; the ones already run are
      skipped). What ran is recorded in NAME, default <prefix>migrations ("migrations" without a prefix)
`,
  status: `  status [--prefix P] [--max-retries N]
      what the tables on DATABASE_URL say now: mutex owners, masters, inbox counts, live failover
      entries. Read-only. Parked is RETRIES >= your InboxModule's retry.maxRetries: without
      --max-retries (or HOLDFAST_INBOX_MAX_RETRIES) the counts that depend on it show as "?".
      No Holdfast table under the prefix is an error (exit 1) that names the prefixes found
`,
  messages: `  messages list [--status S] [--type T] [--limit N] [--offset N] [--max-retries N] [--prefix P]
      the inbox's messages in delivery order (read-only); --offset skips that many (the next page)
  messages <retry|pause|resume|delete> (<id>... | --type T [--status S])
           [--dry-run] [--max-retries N] [--prefix P]
      retry now (an exhausted message gets one more attempt), pause, resume or delete the messages
      named, or every message of a type (by default: retry and delete the parked ones, resume the
      paused ones, pause the due and retrying ones). --dry-run: change nothing, list what would change
      A type T is written as listed, namespace:name[@revision] (demo:note); a name alone matches
      it in any namespace (--type NAME --namespace NS is the same as --type NS:NAME). A type the
      inbox holds no message of is an error (exit 1) that names the types it holds
`,
  release: `  release <mutex|lock> <name> --owner ID [--dry-run] [--prefix P]
      free a simba mutex or a locker lock (HOLDFAST_LOCK row) whose owner you know is dead, if ID
      still holds it, so another instance takes it at once
`,
  doctor: `  doctor [--prefix P] [--locker ${DOCTOR_LOCKERS.join('|')}] [--instances N] [--pool-size N]
         [--listen-url URL]
      check what breaks Holdfast in production and say how to fix it: the clocks, a read-only
      primary, PgBouncer in transaction mode and the LISTEN path (through URL: the inbox's
      notifyListenUrl), schema drift, the connection budget (N instances with pools of N), Galera
      with the 'database' locker. Read-only. Exit code 0 all ok, 1 warnings, 2 a failure
`,
} as const;
type Command = keyof typeof COMMAND_USAGE;

const COMMON = `Every command takes --json (the result as JSON on stdout; an error as {"error": {"code",
"message"}}). Exit code: 0 done, 1 failed (or a message not found, a lock not released), 2 bad usage.
Changes (messages retry|pause|resume|delete, release) print one audit line on stderr: who
(HOLDFAST_ACTOR, else the OS user@host), what, how many.
DATABASE_URL: postgres://user:pass@host:5432/db, mysql://…, mariadb://…, or sqlite:<file>
Table prefix: --prefix, else HOLDFAST_TABLE_PREFIX, else none.
The inbox's maxRetries: --max-retries, else HOLDFAST_INBOX_MAX_RETRIES.
`;

export const USAGE = `usage: holdfast <command> [options]   (holdfast <command> --help for one)

${Object.values(COMMAND_USAGE).join('')}  --version   the CLI's version

${COMMON}`;

/** One command's usage (`holdfast status --help`). */
function commandUsage(command: Command): string {
  return `usage: holdfast ${COMMAND_USAGE[command].trimStart()}\n${COMMON}`;
}

const isCommand = (name: string | undefined): name is Command =>
  name !== undefined && Object.hasOwn(COMMAND_USAGE, name);

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
const prefix = { type: 'string' } as const;
const json = { type: 'boolean' } as const;
const maxRetries = { type: 'string' } as const;
const dryRun = { type: 'boolean' } as const;
const COMMANDS = {
  ddl: { dialect: { type: 'string' }, prefix, json },
  migrate: { prefix, 'migrations-table': { type: 'string' }, json },
  // --inbox-max-retries: the option's earlier name, still accepted.
  status: { prefix, json, 'max-retries': maxRetries, 'inbox-max-retries': maxRetries },
  messages: {
    prefix,
    json,
    'max-retries': maxRetries,
    status: { type: 'string' },
    type: { type: 'string' },
    namespace: { type: 'string' },
    limit: { type: 'string' },
    offset: { type: 'string' },
    'dry-run': dryRun,
  },
  release: { prefix, json, owner: { type: 'string' }, 'dry-run': dryRun },
  doctor: {
    prefix,
    json,
    locker: { type: 'string' },
    instances: { type: 'string' },
    'pool-size': { type: 'string' },
    'listen-url': { type: 'string' },
  },
} satisfies Record<string, Spec>;

function parse<S extends Spec>(args: string[], options: S, positionals = false) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: positionals });
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

/** The inbox's maxRetries: --max-retries (or its old name), else HOLDFAST_INBOX_MAX_RETRIES. */
function inboxMaxRetries(io: CliIo, values: { 'max-retries'?: string; 'inbox-max-retries'?: string }) {
  if (values['max-retries'] !== undefined) return count('--max-retries', values['max-retries']);
  if (values['inbox-max-retries'] !== undefined)
    return count('--inbox-max-retries', values['inbox-max-retries']);
  return count('HOLDFAST_INBOX_MAX_RETRIES', io.env.HOLDFAST_INBOX_MAX_RETRIES);
}

/** Where a database command works: DATABASE_URL, and the table prefix from --prefix, else HOLDFAST_TABLE_PREFIX. */
function database(
  io: CliIo,
  values: { prefix?: string },
): { url: string | undefined; prefix: string | undefined } {
  return { url: io.env.DATABASE_URL, prefix: values.prefix ?? io.env.HOLDFAST_TABLE_PREFIX };
}

/** The version of this package (package.json beside src/ and dist/). */
export function cliVersion(): string {
  return (JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string })
    .version;
}

/** Runs one `holdfast` command line; resolves with the process exit code (0, 1 failure, 2 usage). */
export async function runCli(argv: string[], io: CliIo = processIo): Promise<number> {
  const [command, ...args] = argv;
  // Known before parsing, so that even a usage error answers in JSON.
  const asJson = args.includes('--json');
  const out = (json: boolean | undefined, value: unknown, text: () => string) =>
    io.stdout(json ? `${JSON.stringify(value, null, 2)}\n` : text());
  try {
    if (isCommand(command) && (args.includes('--help') || args.includes('-h'))) {
      io.stdout(commandUsage(command));
      return 0;
    }
    switch (command) {
      case 'ddl': {
        const { values } = parse(args, COMMANDS.ddl);
        const script = ddlCommand({ dialect: values.dialect, prefix: values.prefix });
        out(values.json, { dialect: values.dialect, prefix: values.prefix ?? '', ddl: script }, () => script);
        return 0;
      }
      case 'migrate': {
        const { values } = parse(args, COMMANDS.migrate);
        const where = database(io, values);
        const migrationsTable = values['migrations-table'] ?? defaultMigrationsTable(where.prefix ?? '');
        const ran = await migrateCommand({ ...where, migrationsTable });
        out(values.json, { migrationsTable, ran }, () =>
          ran.length
            ? ran.map((name) => `holdfast migrate: ran ${name}\n`).join('')
            : `holdfast migrate: nothing to run, every Holdfast migration has run (recorded in ${migrationsTable})\n`,
        );
        return 0;
      }
      case 'status': {
        const { values } = parse(args, COMMANDS.status);
        const status = await statusCommand({
          ...database(io, values),
          inboxMaxRetries: inboxMaxRetries(io, values),
        });
        out(values.json, status, () => formatStatus(status));
        return 0;
      }
      case 'messages': {
        const [action, ...rest] = args;
        const { values, positionals } = parse(rest, COMMANDS.messages, true);
        if (action !== 'list' && !MESSAGE_ACTIONS.includes(action as MessageAction)) {
          throw new CliUsageError(
            action === undefined || action.startsWith('-')
              ? `messages needs an action: list, ${MESSAGE_ACTIONS.join(', ')}`
              : `unknown messages action '${action}' (list, ${MESSAGE_ACTIONS.join(', ')})`,
          );
        }
        const max = inboxMaxRetries(io, values);
        if (max === undefined) {
          throw new CliUsageError(
            "messages needs the inbox's maxRetries (statuses depend on it): --max-retries N or HOLDFAST_INBOX_MAX_RETRIES",
          );
        }
        const type = typeSelection(values.type, values.namespace);
        const where = database(io, values);
        let report: MessagesReport;
        if (action === 'list') {
          if (positionals.length)
            throw new CliUsageError(`messages list takes no ids (got '${positionals[0]}')`);
          if (values['dry-run']) throw new CliUsageError('messages list changes nothing: no --dry-run');
          report = await listMessagesCommand({
            ...where,
            maxRetries: max,
            status: values.status,
            type,
            limit: count('--limit', values.limit) ?? 100,
            offset: count('--offset', values.offset) ?? 0,
          });
        } else {
          if (values.limit !== undefined) throw new CliUsageError('--limit goes with messages list');
          if (values.offset !== undefined) throw new CliUsageError('--offset goes with messages list');
          report = await messagesCommand(
            action as MessageAction,
            { ids: positionals, type, status: values.status },
            { ...where, maxRetries: max, dryRun: values['dry-run'] ?? false },
          );
          if (!report.dryRun) io.stderr(auditMessages(io.env, report, where));
        }
        out(values.json, report, () => formatMessages(report, { type: type?.label, status: values.status }));
        return report.messages.some((m) => m.result === 'not found') ? 1 : 0;
      }
      case 'release': {
        const { values, positionals } = parse(args, COMMANDS.release, true);
        if (positionals.length > 2)
          throw new CliUsageError(`release takes a kind and a name (got '${positionals[2]}')`);
        const where = database(io, values);
        const report = await releaseCommand({
          ...where,
          kind: positionals[0],
          name: positionals[1],
          owner: values.owner,
          dryRun: values['dry-run'] ?? false,
        });
        if (report.result !== 'would') io.stderr(auditRelease(io.env, report, where));
        out(values.json, report, () => formatRelease(report));
        return report.result === 'released' || report.result === 'would' ? 0 : 1;
      }
      case 'doctor': {
        const { values } = parse(args, COMMANDS.doctor);
        const report = await doctorCommand({
          ...database(io, values),
          locker: values.locker,
          instances: count('--instances', values.instances),
          poolSize: count('--pool-size', values['pool-size']),
          listenUrl: values['listen-url'],
        });
        out(values.json, report, () => formatDoctor(report));
        return doctorExitCode(report);
      }
      case '--version':
      case '-v':
      case 'version':
        io.stdout(`${cliVersion()}\n`);
        return 0;
      case 'help':
        io.stdout(isCommand(args[0]) ? commandUsage(args[0]) : USAGE);
        return 0;
      case undefined:
      case '--help':
      case '-h':
        io.stdout(USAGE);
        return command === undefined ? 2 : 0;
      default:
        throw new CliUsageError(`unknown command '${command}'`);
    }
  } catch (error) {
    const usage = error instanceof CliUsageError;
    const message = redactUrls(error instanceof Error ? error.message : String(error));
    const code = errorCode(error);
    if (asJson) io.stdout(`${JSON.stringify({ error: { code, message } }, null, 2)}\n`);
    else if (usage) io.stderr(`holdfast: ${message}\n${isCommand(command) ? commandUsage(command) : USAGE}`);
    // Driver messages may quote the URL: never print its password.
    else io.stderr(`holdfast ${command}: ${message}${code ? ` [${code}]` : ''}\n`);
    return usage || error instanceof InvalidTablePrefixError ? 2 : 1;
  }
}

/** A HoldfastError's code, else a driver's (ECONNREFUSED, SQLITE_…, ER_…), else null. */
function errorCode(error: unknown): string | null {
  if (error instanceof HoldfastError) return error.code;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : null;
}

/**
 * `--type` (and the older `--namespace` beside a bare name) as a type selection: a label as the
 * CLI and the dashboard print it, `namespace:name[@revision]` (parseMessageTypeLabel).
 */
function typeSelection(label: string | undefined, namespace: string | undefined): TypeSelection | undefined {
  if (label === undefined) {
    if (namespace !== undefined) throw new CliUsageError('--namespace goes with --type');
    return undefined;
  }
  const filter = parseMessageTypeLabel(label);
  if (!filter.name) {
    throw new CliUsageError(
      `--type '${label}' names no type: write namespace:name, with @revision when it has one (e.g. demo:note)`,
    );
  }
  if (namespace === undefined) return { filter, label };
  if (filter.namespace !== undefined) {
    throw new CliUsageError(
      `--type '${label}' has a namespace already: leave out --namespace '${namespace}'`,
    );
  }
  return { filter: { ...filter, namespace }, label: `${namespace}:${label}` };
}

function redactUrls(text: string): string {
  return text.replace(/[a-z]+:\/\/\S+/gi, (url) => redact(url));
}
