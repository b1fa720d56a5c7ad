import type { MigrationInterface, QueryRunner } from 'typeorm';
import { Catalog, DatabaseResolver, sqlDialect, tableName } from '@holdfast/core/kit';
import { INBOX_TABLES, INBOX_TABLE_UPGRADES } from '@holdfast/inbox';

const TRACE_CONTEXT_COLUMN = INBOX_TABLE_UPGRADES.traceContext.column;

/**
 * Adds Holdfast's nullable `TRACE_CONTEXT` column to `<prefix>COR_MESSAGE`: the accepting trace
 * context the inbox carries to the delivery with `traceContext` on (unused, and never read,
 * without it; a Java client never selects it). A table that has it already is left alone; revert
 * drops it. The prefix comes from HOLDFAST_TABLE_PREFIX, as for the other migrations.
 */
export class CorMessageTraceContext1764000000410 implements MigrationInterface {
  protected get prefix(): string {
    return process.env.HOLDFAST_TABLE_PREFIX ?? '';
  }

  async up(queryRunner: QueryRunner): Promise<void> {
    const { dialect, table } = this.target(queryRunner);
    if (await this.hasColumn(queryRunner)) return;
    const type = dialect.columnType(TRACE_CONTEXT_COLUMN.type);
    await queryRunner.query(`ALTER TABLE ${table} ADD ${TRACE_CONTEXT_COLUMN.name} ${type}`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const { table } = this.target(queryRunner);
    if (!(await this.hasColumn(queryRunner))) return;
    await queryRunner.query(`ALTER TABLE ${table} DROP COLUMN ${TRACE_CONTEXT_COLUMN.name}`);
  }

  private target(queryRunner: QueryRunner) {
    const dialect = sqlDialect(new DatabaseResolver().resolve(queryRunner.connection));
    return { dialect, table: tableName(this.prefix, INBOX_TABLES.message.name) };
  }

  private async hasColumn(queryRunner: QueryRunner): Promise<boolean> {
    const { dialect, table } = this.target(queryRunner);
    const catalog = new Catalog(dialect, (s) => queryRunner.query(s.sql, [...s.params]));
    return (await catalog.column(table, TRACE_CONTEXT_COLUMN.name)) !== undefined;
  }
}
