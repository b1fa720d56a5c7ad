import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { DataSourceOptions } from 'typeorm';
import { HOLDFAST_MIGRATIONS } from '@holdfast/cli';
import { CreateDemoLeaderLedger1764000001000, LeaderLedger } from './simba/leader-ledger.entity';

/** The SQLite file used when DATABASE_URL is not set. */
export const DEFAULT_SQLITE_FILE = './data/demo.sqlite';

/**
 * TypeORM options from the environment: DATABASE_URL=postgres://... or mysql://... (also
 * mariadb://...), otherwise an embedded SQLite file (DEMO_SQLITE_FILE, default ./data/demo.sqlite).
 * Holdfast's migrations, then the demo's own (its fenced ledger table), run at start, so no setup
 * is needed.
 */
export function demoDatabaseOptions(env: NodeJS.ProcessEnv = process.env): DataSourceOptions {
  const common = {
    entities: [LeaderLedger],
    migrations: [...HOLDFAST_MIGRATIONS, CreateDemoLeaderLedger1764000001000],
    migrationsRun: true,
    logging: ['error'] as Array<'error'>,
  };
  const url = env.DATABASE_URL;
  if (!url) {
    const file = resolve(env.DEMO_SQLITE_FILE ?? DEFAULT_SQLITE_FILE);
    mkdirSync(dirname(file), { recursive: true });
    return {
      type: 'better-sqlite3',
      database: file,
      enableWAL: true,
      // How long a statement waits for another process's write lock: below the demo leader's
      // transition (3 s, simba-demo.module.ts), as Simba asks, so a wait cannot outlast a
      // takeover; a statement that gives up is retried (SQLITE_BUSY is transient).
      timeout: 2_500,
      ...common,
    } as DataSourceOptions;
  }
  const scheme = new URL(url).protocol.replace(':', '');
  switch (scheme) {
    case 'postgres':
    case 'postgresql':
      return { type: 'postgres', url, ...common } as DataSourceOptions;
    case 'mysql':
    case 'mariadb':
      return {
        type: scheme === 'mariadb' ? 'mariadb' : 'mysql',
        url: url.replace(/^mariadb:/, 'mysql:'),
        timezone: 'Z',
        ...common,
      } as DataSourceOptions;
    default:
      throw new Error(
        `DATABASE_URL must start with postgres://, mysql:// or mariadb://, got ${JSON.stringify(scheme + '://')}`,
      );
  }
}
