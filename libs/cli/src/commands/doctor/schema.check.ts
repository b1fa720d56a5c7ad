import {
  Catalog,
  checkLiveTable,
  indexName,
  LiveTable,
  tableName,
  type SqlClient,
  type TableSpec,
} from '@holdfast/core/kit';
import { HOLDFAST_TABLES } from '../../tables';
import type { DoctorCheck } from './doctor-report';

/** Each Holdfast table under the prefix against what its module expects: columns, types, indexes. */
export async function schemaChecks(sql: SqlClient, prefix: string): Promise<DoctorCheck[]> {
  const catalog = Catalog.of(sql);
  const found: { spec: TableSpec; table: string }[] = [];
  const absent: string[] = [];
  for (const spec of HOLDFAST_TABLES) {
    const table = tableName(prefix, spec.name);
    if (await catalog.tableExists(table)) found.push({ spec, table });
    else absent.push(table);
  }
  const checks: DoctorCheck[] = absent.length
    ? [
        {
          check: 'schema',
          status: 'skipped',
          detail: `${absent.join(', ')} not created: the modules that use them are not used here (or create them with \`holdfast migrate\`)`,
        },
      ]
    : [];
  if (!found.length) {
    return [
      {
        check: 'schema',
        status: 'warning',
        detail: `no Holdfast table under prefix '${prefix}' (${HOLDFAST_TABLES.map((s) => tableName(prefix, s.name)).join(', ')})`,
        fix: "check --prefix (or HOLDFAST_TABLE_PREFIX); create the tables with `holdfast migrate`, or let the modules create theirs (schema 'create')",
      },
    ];
  }
  for (const { spec, table } of found) checks.push(await tableCheck(sql, catalog, prefix, spec, table));
  return checks;
}

/** One table present: its columns as the module's schema check reads them, then its indexes. */
async function tableCheck(
  sql: SqlClient,
  catalog: Catalog,
  prefix: string,
  spec: TableSpec,
  table: string,
): Promise<DoctorCheck> {
  const columns = (await catalog.columns(table)) ?? [];
  try {
    checkLiveTable(sql.dialect, spec, new LiveTable(table, true, columns));
  } catch (error) {
    return {
      check: 'schema',
      status: 'failure',
      detail: `${table}: ${error instanceof Error ? error.message : String(error)}`,
      fix: 'the module refuses to start on this table (schema check): alter the column as the detail says',
    };
  }
  const indexes = new Set(((await catalog.indexes(table)) ?? []).map((i) => i.name.toLowerCase()));
  const missing = (spec.indexes ?? [])
    .map((index) => indexName(prefix, index))
    .filter((name) => !indexes.has(name.toLowerCase()));
  if (missing.length) {
    return {
      check: 'schema',
      status: 'warning',
      detail: `${table}: index(es) ${missing.join(', ')} missing: the statements that use them scan the table`,
      fix: `create them from \`holdfast ddl --dialect ${sql.dialect.name}${prefix ? ` --prefix ${prefix}` : ''}\``,
    };
  }
  return { check: 'schema', status: 'ok', detail: `${table}: every column and index as expected` };
}
