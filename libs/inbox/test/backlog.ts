import type { SqlClient } from '@holdfast/core/kit';
import { statement } from '@holdfast/core/kit';

/**
 * Fills COR_MESSAGE with `size` due messages in one statement (ids '0000000001'…, INSERTED one
 * millisecond apart from 2026-01-01, in id order); the last `expired` of them have expired, the
 * others expire in a day. Then updates the planner's statistics.
 */
export async function fillBacklog(
  sql: SqlClient,
  table: string,
  size: number,
  { expired = 0, analyze = true }: { expired?: number; analyze?: boolean } = {},
): Promise<void> {
  const cut = size - expired;
  const columns =
    'ID, PAYLOAD_ENCODING, PAYLOAD_TYPE_NAMESPACE, PAYLOAD_TYPE_NAME, PAYLOAD_TYPE_REVISION, PAYLOAD, INSERTED, TTL_DURATION, EXPIRATION, RETRIES, NEXT_RETRY, ERROR';
  switch (sql.dialect.name) {
    case 'postgres':
      await sql.execute(
        statement(
          `INSERT INTO ${table} (${columns}) SELECT lpad(g::text, 10, '0'), 'jackson', 'test', 'order-placed', NULL, ` +
            `convert_to('{}', 'UTF8'), TIMESTAMPTZ '2026-01-01 00:00:00+00' + g * INTERVAL '1 millisecond', NULL, ` +
            `CASE WHEN g > ${cut} THEN TIMESTAMPTZ '2026-01-01 00:00:00+00' ELSE clock_timestamp() + INTERVAL '1 day' END, 0, NULL, NULL ` +
            `FROM generate_series(1, ${size}) g`,
        ),
      );
      if (analyze) await sql.execute(statement(`ANALYZE ${table}`));
      break;
    case 'mysql':
    case 'mariadb':
      await sql.execute(
        statement(
          `INSERT INTO ${table} (${columns}) SELECT LPAD(seq, 10, '0'), 'jackson', 'test', 'order-placed', NULL, '{}', ` +
            `CAST('2026-01-01 00:00:00' AS DATETIME(3)) + INTERVAL seq * 1000 MICROSECOND, NULL, ` +
            `CASE WHEN seq > ${cut} THEN CAST('2026-01-01 00:00:00' AS DATETIME(3)) ELSE UTC_TIMESTAMP(3) + INTERVAL 1 DAY END, 0, NULL, NULL ` +
            `FROM seq_1_to_${size}`,
        ),
      );
      await sql.query(statement(`ANALYZE TABLE ${table}`));
      break;
    case 'sqlite':
      await sql.execute(
        statement(
          `WITH RECURSIVE g(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM g WHERE x < ${size}) ` +
            `INSERT INTO ${table} (${columns}) SELECT substr('0000000000' || x, -10), 'jackson', 'test', 'order-placed', NULL, ` +
            `CAST('{}' AS BLOB), strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || (x / 1000.0) || ' seconds'), NULL, ` +
            `CASE WHEN x > ${cut} THEN '2026-01-01T00:00:00.000Z' ELSE strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+1 day') END, 0, NULL, NULL FROM g`,
        ),
      );
      await sql.execute(statement('ANALYZE'));
      break;
    default:
      throw new Error(`no backlog filler for ${sql.dialect.name}`);
  }
}

interface PgPlan {
  'Node Type': string;
  'Relation Name'?: string;
  'Parent Relationship'?: string;
  Plans?: PgPlan[];
}

/**
 * What is wrong with the plan the database chooses for `planned` (bound as it ran): a full
 * scan of `table`, or a sort whose input reads `table`. Each dialect's own EXPLAIN.
 */
export async function planProblems(
  sql: SqlClient,
  table: string,
  planned: { sql: string; params: readonly unknown[] },
): Promise<string[]> {
  const bare = table.slice(table.lastIndexOf('.') + 1);
  const problems: string[] = [];
  switch (sql.dialect.name) {
    case 'postgres': {
      const [row] = await sql.query<{ 'QUERY PLAN': [{ Plan: PgPlan }] }>(
        statement(`EXPLAIN (FORMAT JSON) ${planned.sql}`, planned.params),
      );
      const isTable = (n: PgPlan) => n['Relation Name']?.toLowerCase() === bare.toLowerCase();
      // A sort's own input: outer/inner children, not init plans or CTEs hanging off it.
      const feeds = (n: PgPlan): PgPlan[] =>
        (n.Plans ?? [])
          .filter((c) => ['Outer', 'Inner', 'Member'].includes(c['Parent Relationship'] ?? ''))
          .flatMap((c) => [c, ...feeds(c)]);
      const walk = (n: PgPlan) => {
        if (n['Node Type'] === 'Seq Scan' && isTable(n)) problems.push(`Seq Scan on ${bare}`);
        if (/Sort/.test(n['Node Type']) && feeds(n).some(isTable))
          problems.push(`${n['Node Type']} of ${bare}`);
        for (const c of n.Plans ?? []) walk(c);
      };
      walk(row['QUERY PLAN'][0].Plan);
      break;
    }
    case 'mysql':
    case 'mariadb': {
      const rows = await sql.query<{ table: string; type: string; key: string | null; Extra: string | null }>(
        statement(`EXPLAIN ${planned.sql}`, planned.params),
      );
      for (const r of rows) {
        if (r.table !== bare) continue;
        if (r.type === 'ALL') problems.push(`full scan of ${bare}`);
        if (/filesort/i.test(r.Extra ?? '')) problems.push(`filesort of ${bare}`);
      }
      break;
    }
    case 'sqlite': {
      const rows = await sql.query<{ detail: string }>(
        statement(`EXPLAIN QUERY PLAN ${planned.sql}`, planned.params),
      );
      for (const { detail } of rows) {
        if (new RegExp(`^SCAN ${bare}$`, 'i').test(detail)) problems.push(`full scan of ${bare}`);
        if (/TEMP B-TREE FOR .*ORDER BY/i.test(detail)) problems.push(`sort: ${detail}`);
      }
      break;
    }
  }
  return problems;
}
