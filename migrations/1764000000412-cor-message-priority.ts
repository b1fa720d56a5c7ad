import type { MigrationInterface, QueryRunner } from 'typeorm';
import { DatabaseResolver, indexName, sqlDialect, tableName } from '@holdfast/core/kit';
import { INBOX_TABLES, INBOX_TABLE_UPGRADES } from '@holdfast/inbox';

/**
 * The opt-in `PRIORITY` column of `<prefix>COR_MESSAGE` (INT NOT NULL DEFAULT 0, so rows written
 * by a client that does not know it sort as 0) and its delivery-order index (PRIORITY, INSERTED,
 * ID), for the inbox option `priorities: true`. A table without them works as before with
 * priorities off. Adding a column with a constant default rewrites no rows on PostgreSQL 11+ and
 * MariaDB 10.3+. The prefix comes from HOLDFAST_TABLE_PREFIX, as for the other migrations.
 */
export class CorMessagePriority1764000000412 implements MigrationInterface {
  protected get prefix(): string {
    return process.env.HOLDFAST_TABLE_PREFIX ?? '';
  }

  async up(queryRunner: QueryRunner): Promise<void> {
    const dialect = sqlDialect(new DatabaseResolver().resolve(queryRunner.connection));
    for (const statement of INBOX_TABLE_UPGRADES.priority.sql(dialect, this.prefix))
      await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const name = new DatabaseResolver().resolve(queryRunner.connection);
    const table = tableName(this.prefix, INBOX_TABLES.message.name);
    const index = indexName(this.prefix, INBOX_TABLE_UPGRADES.priority.index);
    await queryRunner.query(
      name === 'mysql' || name === 'mariadb' ? `DROP INDEX ${index} ON ${table}` : `DROP INDEX ${index}`,
    );
    await queryRunner.query(`ALTER TABLE ${table} DROP COLUMN PRIORITY`);
  }
}
