import { Column, Entity, PrimaryColumn, Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { FenceColumn } from '@holdfast/simba';

/** The one row of the demo's own fenced table. */
export const LEDGER_ROW = 'demo-leader';

/**
 * The application's own data that only the current leader may write: each write goes through
 * `fenced(repo)` with the leader's fencing token, so a leader that was paused past its lease
 * (and wakes up believing it still leads) cannot overwrite what its successor wrote.
 */
@Entity({ name: 'demo_leader_ledger' })
export class LeaderLedger {
  @PrimaryColumn({ type: 'varchar', length: 64 })
  id!: string;

  /** The contender id of the instance that wrote last. */
  @Column({ type: 'varchar', length: 64 })
  writer!: string;

  /** How many leader ticks have written the row. */
  @Column({ type: 'int' })
  ticks!: number;

  @FenceColumn()
  fence?: number | null;
}

/** The demo's own migration (after Holdfast's): the ledger table and its one row. */
export class CreateDemoLeaderLedger1764000001000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'demo_leader_ledger',
        columns: [
          { name: 'id', type: 'varchar', length: '64', isPrimary: true },
          { name: 'writer', type: 'varchar', length: '64' },
          { name: 'ticks', type: 'int' },
          { name: 'fence', type: 'bigint', isNullable: true },
        ],
      }),
      true,
    );
    await queryRunner.query(
      `INSERT INTO demo_leader_ledger (id, writer, ticks, fence) VALUES ('${LEDGER_ROW}', '', 0, NULL)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('demo_leader_ledger', true);
  }
}
