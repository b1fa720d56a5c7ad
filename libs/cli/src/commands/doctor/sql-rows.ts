import { statement, type SqlClient } from '@holdfast/core/kit';

/** The first row a query answers (an empty row when none). */
export async function one(sql: SqlClient, text: string): Promise<Record<string, unknown>> {
  const [row] = (await sql.query(statement(text))) as Record<string, unknown>[];
  return row ?? {};
}

/** The first value of a row whose keys a driver may upper- or lower-case. */
export function field(row: Record<string, unknown>, name: string): unknown {
  const key = Object.keys(row).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : row[key];
}
