import type { MigrationInterface, QueryRunner } from 'typeorm';
import { DatabaseResolver } from '../database/database-resolver';
import { tableName } from '../naming/table-prefix';
import { tableDdl } from './ddl';
import { TableSpec } from './table-spec';

/**
 * A TypeORM migration that creates Holdfast tables for whatever database it runs on, from the
 * same TableSpec the module checks at startup. The prefix comes from HOLDFAST_TABLE_PREFIX
 * (default none); subclass and override `prefix` to fix it in code.
 */
export abstract class HoldfastTableMigration implements MigrationInterface {
  protected abstract readonly tables: readonly TableSpec[];

  protected get prefix(): string {
    return process.env.HOLDFAST_TABLE_PREFIX ?? '';
  }

  async up(queryRunner: QueryRunner): Promise<void> {
    const dialect = new DatabaseResolver().resolve(queryRunner.connection);
    for (const spec of this.tables) {
      for (const statement of tableDdl(dialect, spec, this.prefix)) await queryRunner.query(statement);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const spec of [...this.tables].reverse()) {
      await queryRunner.query(`DROP TABLE ${tableName(this.prefix, spec.name)}`);
    }
  }
}
