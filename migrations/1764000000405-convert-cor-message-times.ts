import type { MigrationInterface, QueryRunner } from 'typeorm';
import { DatabaseResolver } from '@holdfast/core/kit';
import { INBOX_TABLE_UPGRADES } from '@holdfast/inbox';

/**
 * Converts a `<prefix>COR_MESSAGE` made by the previous Holdfast layout (BIGINT epoch-ms times,
 * sentinels in NEXT_RETRY, ERROR cut to 4000 characters) to camunda-bpm-correlate's layout
 * (timestamps, FAR_FUTURE pause, unbounded ERROR), keeping every message. A table that already
 * has the seed's layout (new installs: migration 1764000000004 creates it) is left alone.
 * The prefix comes from HOLDFAST_TABLE_PREFIX, as for the other migrations.
 */
export class ConvertCorMessageTimes1764000000405 implements MigrationInterface {
  protected get prefix(): string {
    return process.env.HOLDFAST_TABLE_PREFIX ?? '';
  }

  async up(queryRunner: QueryRunner): Promise<void> {
    const dialect = new DatabaseResolver().resolve(queryRunner.connection);
    const query = (sql: string, params?: unknown[]) => queryRunner.query(sql, params);
    if (!(await INBOX_TABLE_UPGRADES.epochMillisTimes.applies(dialect, query, this.prefix))) return;
    for (const statement of INBOX_TABLE_UPGRADES.epochMillisTimes.sql(dialect, this.prefix))
      await queryRunner.query(statement);
  }

  /** The old layout is not restored: it cannot hold an unbounded ERROR or the seed's pause. */
  async down(): Promise<void> {
    // Nothing: the converted table keeps working with this and later versions.
  }
}
