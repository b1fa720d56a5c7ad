import type { MigrationInterface, QueryRunner } from 'typeorm';
import { DatabaseResolver, tableName } from '@holdfast/core/kit';
import { INBOX_TABLES } from '@holdfast/inbox';

/**
 * PostgreSQL: gives `<prefix>COR_MESSAGE` the fill factor Holdfast now creates it with (50), so
 * that a claim's lease is a HOT update (see `INBOX_TABLES.message.fillFactor`). For a table created
 * before (by migration 1764000000004 of an earlier version, or by another DDL). Only the pages
 * written from then on follow it; `VACUUM FULL <prefix>COR_MESSAGE` rewrites the others (it locks
 * the table while it runs, so it is left to the operator). Other databases: nothing.
 * The prefix comes from HOLDFAST_TABLE_PREFIX, as for the other migrations.
 */
export class CorMessageFillFactor1764000000408 implements MigrationInterface {
  protected get prefix(): string {
    return process.env.HOLDFAST_TABLE_PREFIX ?? '';
  }

  async up(queryRunner: QueryRunner): Promise<void> {
    await this.alter(queryRunner, `SET (fillfactor = ${INBOX_TABLES.message.fillFactor})`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await this.alter(queryRunner, 'RESET (fillfactor)');
  }

  /** `ALTER TABLE <prefix>COR_MESSAGE <change>` on PostgreSQL; nothing elsewhere. */
  private async alter(queryRunner: QueryRunner, change: string): Promise<void> {
    if (new DatabaseResolver().resolve(queryRunner.connection) !== 'postgres') return;
    await queryRunner.query(`ALTER TABLE ${tableName(this.prefix, INBOX_TABLES.message.name)} ${change}`);
  }
}
