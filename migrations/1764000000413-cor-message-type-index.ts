import type { MigrationInterface, QueryRunner } from 'typeorm';
import { DatabaseResolver, indexName, sqlDialect, tableName } from '@holdfast/core/kit';
import { INBOX_TABLES, INBOX_TABLE_UPGRADES } from '@holdfast/inbox';

/**
 * The index (PAYLOAD_TYPE_NAME, INSERTED, ID) of `<prefix>COR_MESSAGE` through which a claim with
 * the inbox option `fairShare` reaches each type name's first due messages. An index only: the
 * seed's columns are unchanged, and a table without it works as before with fair share off (on,
 * its claims scan, and startup logs the DDL). The prefix comes from HOLDFAST_TABLE_PREFIX, as for
 * the other migrations.
 */
export class CorMessageTypeIndex1764000000413 implements MigrationInterface {
  protected get prefix(): string {
    return process.env.HOLDFAST_TABLE_PREFIX ?? '';
  }

  async up(queryRunner: QueryRunner): Promise<void> {
    const dialect = sqlDialect(new DatabaseResolver().resolve(queryRunner.connection));
    for (const statement of INBOX_TABLE_UPGRADES.typeIndex.sql(dialect, this.prefix))
      await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const name = new DatabaseResolver().resolve(queryRunner.connection);
    const table = tableName(this.prefix, INBOX_TABLES.message.name);
    const index = indexName(this.prefix, INBOX_TABLE_UPGRADES.typeIndex.index);
    await queryRunner.query(
      name === 'mysql' || name === 'mariadb' ? `DROP INDEX ${index} ON ${table}` : `DROP INDEX ${index}`,
    );
  }
}
