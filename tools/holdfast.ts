/**
 * holdfast ddl --dialect <postgres|mysql|mariadb|sqlite|mssql|oracle> [--prefix P_]
 * Prints the DDL of every Holdfast table and index for that dialect.
 */
import { DIALECTS, ddlScript, isDialect, validateTablePrefix } from '@holdfast/core';
import { HOLDFAST_TABLES } from '../migrations/tables';

function usage(message?: string): never {
  if (message) process.stderr.write(`holdfast: ${message}\n`);
  process.stderr.write(`usage: holdfast ddl --dialect <${DIALECTS.join('|')}> [--prefix PREFIX]\n`);
  process.exit(2);
}

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  if (i >= 0) return args[i + 1] ?? usage(`${name} needs a value`);
  const inline = args.find((a) => a.startsWith(`${name}=`));
  return inline?.slice(name.length + 1);
}

function main(argv: string[]): void {
  const [command, ...args] = argv;
  if (command !== 'ddl') usage(command ? `unknown command '${command}'` : undefined);
  const dialect = option(args, '--dialect');
  if (!dialect) usage('--dialect is required');
  if (!isDialect(dialect)) usage(`unknown dialect '${dialect}'`);
  const prefix = option(args, '--prefix') ?? '';
  try {
    validateTablePrefix(prefix);
  } catch (error) {
    usage((error as Error).message);
  }
  process.stdout.write(ddlScript(dialect, HOLDFAST_TABLES, prefix));
}

main(process.argv.slice(2));
