import type { MigrationInterface } from 'typeorm';

/** All Holdfast migrations, in order: pass to TypeORM's `migrations` option. */
export const HOLDFAST_MIGRATIONS: (new () => MigrationInterface)[] = [];
