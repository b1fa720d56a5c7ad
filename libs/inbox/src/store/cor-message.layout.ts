import type { CorMessageTable } from './cor-message.base';

/**
 * Reads the live type of the time columns where the dialect has two accepted forms
 * (MySQL/MariaDB `DATETIME(3)` or `TIMESTAMP`), and whether the delivery-order index exists
 * (MySQL/MariaDB force it). Call once the table exists.
 */
export async function detectCorMessageLayout(on: CorMessageTable): Promise<void> {
  const { sql, table, orderIndex } = on;
  if (sql.dialect.name !== 'mysql' && sql.dialect.name !== 'mariadb') return;
  const dot = table.lastIndexOf('.');
  const name = dot < 0 ? table : table.slice(dot + 1);
  const schema = dot < 0 ? undefined : table.slice(0, dot);
  const rows = await sql.query<{ t: string }>(
    `SELECT DATA_TYPE AS t FROM information_schema.columns WHERE table_name = ? AND column_name = 'NEXT_RETRY' ` +
      `AND table_schema = ${schema ? '?' : 'DATABASE()'}`,
    schema ? [name, schema] : [name],
  );
  const type = String(rows[0]?.t ?? 'datetime').toLowerCase();
  on.t = sql.dialect.timestampSql(type === 'timestamp' ? 'timestamp' : 'datetime');
  const indexes = await sql.query(
    `SELECT 1 FROM information_schema.statistics WHERE table_name = ? AND index_name = ? ` +
      `AND table_schema = ${schema ? '?' : 'DATABASE()'}`,
    schema ? [name, orderIndex, schema] : [name, orderIndex],
  );
  on.hasOrderIndex = indexes.length > 0;
}
