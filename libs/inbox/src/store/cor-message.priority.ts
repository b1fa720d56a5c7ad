import {
  Catalog,
  indexName,
  tableName,
  type ColumnSpec,
  type IndexSpec,
  type SqlClient,
  type SqlDialect,
  type TableSpec,
} from '@holdfast/core/kit';
import { COR_MESSAGE_TABLE } from './cor-message.table';

/**
 * Priorities (the inbox option `priorities`): an opt-in column of `<prefix>COR_MESSAGE` that
 * camunda-bpm-correlate's DDL does not have. Lower is delivered first; 0 by default, also for rows
 * written by a client that does not know the column (its DEFAULT), so no NULL ever sorts.
 */
export const MIN_PRIORITY = -32768;
export const MAX_PRIORITY = 32767;

export const COR_MESSAGE_PRIORITY_COLUMN: ColumnSpec = {
  name: 'PRIORITY',
  type: { kind: 'int' },
  nullable: false,
  default: 0,
  // Detected at startup: a table without it passes the schema check and stops startup with
  // InboxPriorityColumnError only when priorities are on.
  optional: true,
};

/** Delivery order with priorities: the claim walks it from its start, as it walks (INSERTED, ID) without. */
export const COR_MESSAGE_PRIORITY_INDEX: IndexSpec = {
  name: 'COR_MESSAGE_PRIO_IDX',
  columns: ['PRIORITY', 'INSERTED', 'ID'],
};

/** What the statements need to know when priorities are on (see CorMessageFacts.priority). */
export interface PriorityLayout {
  /** The prefixed name of COR_MESSAGE_PRIORITY_INDEX (MySQL/MariaDB force it when it exists). */
  index: string;
  indexed: boolean;
}

/**
 * COR_MESSAGE as Holdfast creates it with priorities on: the seed's columns plus PRIORITY, and,
 * with `withIndex`, the priority order index (added once the column is known to exist).
 */
export function corMessageSpecWithPriority(withIndex: boolean): TableSpec {
  return {
    ...COR_MESSAGE_TABLE,
    columns: [...COR_MESSAGE_TABLE.columns, COR_MESSAGE_PRIORITY_COLUMN],
    indexes: [...(COR_MESSAGE_TABLE.indexes ?? []), ...(withIndex ? [COR_MESSAGE_PRIORITY_INDEX] : [])],
  };
}

/** The DDL that gives an existing COR_MESSAGE its PRIORITY column and index (migration 1764000000412). */
export function addPriorityColumnSql(d: SqlDialect, prefix: string): string[] {
  const table = tableName(prefix, COR_MESSAGE_TABLE.name);
  const index = COR_MESSAGE_PRIORITY_INDEX;
  return [
    `ALTER TABLE ${table} ADD COLUMN PRIORITY ${d.columnType({ kind: 'int' })} DEFAULT 0 NOT NULL`,
    `CREATE INDEX ${indexName(prefix, index)} ON ${table} (${index.columns.join(', ')})`,
  ];
}

/** The priority layout of a table that has the column: whether its index exists (see orderIndexHint). */
export async function detectPriorityLayout(sql: SqlClient, prefix: string): Promise<PriorityLayout> {
  const index = indexName(prefix, COR_MESSAGE_PRIORITY_INDEX);
  const table = tableName(prefix, COR_MESSAGE_TABLE.name);
  return { index, indexed: await Catalog.of(sql).hasIndexNamed(table, index) };
}
