import {
  Catalog,
  createIndexSql,
  indexName,
  tableName,
  type IndexSpec,
  type SqlClient,
  type SqlDialect,
  type TableSpec,
} from '@holdfast/core/kit';
import { COR_MESSAGE_TABLE } from './cor-message.table';

/**
 * Fair share (the inbox option `fairShare`): the key a share is counted by is the message type's
 * name (PAYLOAD_TYPE_NAME, a column of the seed's table, so messages a Java client wrote count
 * too). A claim takes at most `perKey` messages of one key, and takes them round by round: every
 * key's first due message, then every key's second, and so on, up to the claim's size.
 *
 * The claim reaches each key through this index: the keys by a skip scan (one probe per key),
 * each key's first due messages from the start of its range. A key with 100,000 waiting costs
 * a claim `perKey` rows, never a walk over its backlog.
 */
export const COR_MESSAGE_TYPE_INDEX: IndexSpec = {
  name: 'COR_MESSAGE_TYPE_IDX',
  columns: ['PAYLOAD_TYPE_NAME', 'INSERTED', 'ID'],
};

/** What the claims need to know when fair share is on (see CorMessageFacts.fairShare). */
export interface FairShareLayout {
  /** Most messages of one key per claim. */
  perKey: number;
  /** The prefixed name of COR_MESSAGE_TYPE_INDEX (MySQL/MariaDB force it when it exists). */
  index: string;
  indexed: boolean;
}

/** COR_MESSAGE with the type index (created under `schema: 'create'`, else a warning with its DDL). */
export function corMessageSpecWithTypeIndex(spec: TableSpec = COR_MESSAGE_TABLE): TableSpec {
  return { ...spec, indexes: [...(spec.indexes ?? []), COR_MESSAGE_TYPE_INDEX] };
}

/** The DDL that gives an existing COR_MESSAGE the type index (migration 1764000000413). */
export function addTypeIndexSql(d: SqlDialect, prefix: string): string[] {
  return [createIndexSql(d, COR_MESSAGE_TABLE, COR_MESSAGE_TYPE_INDEX, prefix)];
}

/** The fair-share layout: whether the type index exists (a claim without it scans). */
export async function detectFairShareLayout(
  sql: SqlClient,
  prefix: string,
  perKey: number,
): Promise<FairShareLayout> {
  const index = indexName(prefix, COR_MESSAGE_TYPE_INDEX);
  const table = tableName(prefix, COR_MESSAGE_TABLE.name);
  return { perKey, index, indexed: await Catalog.of(sql).hasIndexNamed(table, index) };
}

/**
 * `WITH RECURSIVE hf_keys(k) AS (…)`: the distinct keys of `table` by a skip scan of the type
 * index (each step the smallest key above the last one), ending with one NULL row. The keys of
 * every row, due or not: a key whose messages are all leased or waiting costs one probe more.
 */
export function fairKeysCte(table: string): string {
  return (
    `WITH RECURSIVE hf_keys(k) AS (SELECT MIN(PAYLOAD_TYPE_NAME) FROM ${table} ` +
    `UNION ALL SELECT (SELECT MIN(hf_n.PAYLOAD_TYPE_NAME) FROM ${table} hf_n WHERE hf_n.PAYLOAD_TYPE_NAME > hf_keys.k) ` +
    `FROM hf_keys WHERE hf_keys.k IS NOT NULL)`
  );
}
