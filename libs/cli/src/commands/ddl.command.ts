import { DIALECTS, ddlScript, isDialect, validateTablePrefix } from '@holdfast/core/kit';
import { jsonOption, output, parseOptions, prefixOption, type CliCommand } from '../cli-command';
import { CliUsageError } from '../errors';
import { HOLDFAST_TABLES } from '../tables';

/** `holdfast ddl --dialect <d> [--prefix P]`: the DDL of every Holdfast table and index. */
export function ddlCommand(options: { dialect?: string; prefix?: string }): string {
  const { dialect, prefix = '' } = options;
  if (!dialect) throw new CliUsageError(`--dialect is required (${DIALECTS.join(', ')})`);
  if (!isDialect(dialect)) throw new CliUsageError(`unknown dialect '${dialect}' (${DIALECTS.join(', ')})`);
  validateTablePrefix(prefix);
  return ddlScript(dialect, HOLDFAST_TABLES, prefix);
}

export const ddl: CliCommand = {
  name: 'ddl',
  usage: `  ddl --dialect <postgres|mysql|mariadb|sqlite|mssql|oracle> [--prefix P]
      print the DDL of every Holdfast table and index
`,
  async run(args, io) {
    const { values } = parseOptions(args, {
      dialect: { type: 'string' },
      prefix: prefixOption,
      json: jsonOption,
    });
    const script = ddlCommand({ dialect: values.dialect, prefix: values.prefix });
    output(
      io,
      values.json,
      { dialect: values.dialect, prefix: values.prefix ?? '', ddl: script },
      () => script,
    );
    return Promise.resolve(0);
  },
};
