import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { SchemaManager, sqlClientFor, tableName, type TableSpec, statement } from '@holdfast/core/kit';
import {
  createTestDataSource,
  forkTs,
  tempSqliteFile,
  testDatabases,
  uniqueTablePrefix,
  waitForExit,
  waitForMessage,
} from '@holdfast/testing';
import { FAILOVER_TABLES } from '@holdfast/failover';
import { INBOX_TABLES } from '@holdfast/inbox';
import { SIMBA_TABLES } from '@holdfast/simba';

const WORKER = join(__dirname, 'workers', 'boot-app.worker.ts');
const REPLICAS = 4;
const ROUNDS = 4;
const TABLES: readonly TableSpec[] = [SIMBA_TABLES.mutex, INBOX_TABLES.message, FAILOVER_TABLES.store];

interface Booted {
  t: 'booted';
  prefix: string;
  ok: boolean;
  error?: string;
}

/**
 * A first deploy of an app with Simba, the inbox and failover (`schema: 'create'`): every replica
 * (a real process) boots at the same moment on fresh tables, round after round. 0 failed boots.
 */
describe('deploy: replicas of a Holdfast app boot together', () => {
  it.each(testDatabases())(
    `[%s] ${REPLICAS} replicas boot at once on fresh tables, ${ROUNDS} rounds, none fails`,
    async (db) => {
      const sqliteFile = db === 'sqlite' ? tempSqliteFile('deploy-boot') : undefined;
      const dataSource = await createTestDataSource(db, { sqliteFile });
      const sql = sqlClientFor(dataSource);
      const schema = new SchemaManager(sql);
      const replicas: ChildProcess[] = [];
      const prefixes: string[] = [];
      try {
        for (let i = 0; i < REPLICAS; i++) replicas.push(forkTs(WORKER, [db, sqliteFile ?? '']));
        await Promise.all(
          replicas.map((r) => waitForMessage(r, (m: { t: string }) => m.t === 'ready', 120_000)),
        );
        const failures: string[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          const prefix = uniqueTablePrefix(`deploy_${db}_${round}`);
          prefixes.push(prefix);
          const results = replicas.map((r) =>
            waitForMessage<Booted>(r, (m) => m.t === 'booted' && m.prefix === prefix, 120_000),
          );
          for (const r of replicas) r.send({ t: 'boot', prefix });
          for (const r of await Promise.all(results)) if (!r.ok) failures.push(`round ${round}: ${r.error}`);
          for (const spec of TABLES) {
            const table = tableName(prefix, spec.name);
            expect(await schema.tableExists(table)).toBe(true);
            for (const index of spec.indexes ?? []) {
              expect(await schema.indexExists(table, `${prefix}${index.name}`, index.columns)).toBe(true);
            }
          }
        }
        expect(failures).toEqual([]);
      } finally {
        for (const r of replicas) if (r.connected) r.send({ t: 'exit' });
        await Promise.all(replicas.map((r) => waitForExit(r, 15_000)));
        for (const prefix of prefixes) {
          for (const spec of TABLES) {
            await sql
              .execute(statement(`DROP TABLE IF EXISTS ${tableName(prefix, spec.name)}`))
              .catch(() => undefined);
          }
        }
        await dataSource.destroy();
      }
    },
    300_000,
  );
});
