import { DIALECTS, ddlScript, isDialect, validateTablePrefix } from '@holdfast/core/kit';
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
