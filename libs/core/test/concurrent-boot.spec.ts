import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { SchemaManager, sqlClientFor, tableName, statement } from '@holdfast/core/kit';
import {
  createTestDataSource,
  forkTs,
  tempSqliteFile,
  testDatabases,
  uniqueTablePrefix,
  waitForExit,
  waitForMessage,
} from '@holdfast/testing';
import { BOOT_TABLES } from './workers/schema-boot.tables';

const WORKER = join(__dirname, 'workers', 'schema-boot.worker.ts');
const REPLICAS = 4;
const ROUNDS = 6;

interface Booted {
  t: 'booted';
  prefix: string;
  ok: boolean;
  error?: string;
}

/**
 * A first deploy: several replicas (real processes) run the schema step at the same moment on
 * fresh tables, round after round. Every boot must succeed and leave every table and index.
 */
describe('concurrent boot on fresh tables', () => {
  it.each(testDatabases())(
    `[%s] ${REPLICAS} processes create the same tables at once, ${ROUNDS} rounds, 0 failures`,
    async (db) => {
      const sqliteFile = db === 'sqlite' ? tempSqliteFile('core-boot') : undefined;
      const dataSource = await createTestDataSource(db, { sqliteFile });
      const sql = sqlClientFor(dataSource);
      const schema = new SchemaManager(sql);
      const workers: ChildProcess[] = [];
      const prefixes: string[] = [];
      try {
        for (let i = 0; i < REPLICAS; i++) workers.push(forkTs(WORKER, [db, sqliteFile ?? '']));
        await Promise.all(
          workers.map((w) => waitForMessage(w, (m: { t: string }) => m.t === 'ready', 60_000)),
        );

        const failures: string[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          const prefix = uniqueTablePrefix(`boot_${db}_${round}`);
          prefixes.push(prefix);
          const results = workers.map((w) =>
            waitForMessage<Booted>(w, (m) => m.t === 'booted' && m.prefix === prefix, 60_000),
          );
          for (const w of workers) w.send({ t: 'boot', prefix });
          for (const r of await Promise.all(results)) if (!r.ok) failures.push(`round ${round}: ${r.error}`);
          for (const spec of BOOT_TABLES) {
            const table = tableName(prefix, spec.name);
            expect(await schema.tableExists(table)).toBe(true);
            for (const index of spec.indexes ?? []) {
              expect(await schema.indexExists(table, `${prefix}${index.name}`, index.columns)).toBe(true);
            }
          }
        }
        expect(failures).toEqual([]);
      } finally {
        for (const w of workers) if (w.connected) w.send({ t: 'exit' });
        await Promise.all(workers.map((w) => waitForExit(w, 10_000)));
        for (const prefix of prefixes) {
          for (const spec of BOOT_TABLES) {
            await sql
              .execute(statement(`DROP TABLE IF EXISTS ${tableName(prefix, spec.name)}`))
              .catch(() => undefined);
          }
        }
        await dataSource.destroy();
      }
    },
    180_000,
  );
});
