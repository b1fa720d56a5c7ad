/**
 * One replica of an app that uses Simba, the inbox and failover with `schema: 'create'`. It loads
 * everything first, then on each 'boot' message (sent to every replica at the same moment) boots
 * the Nest application on fresh tables, reports how it went, and closes it again.
 * argv: <db> [sqlite file]
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createTestDataSource, type TestDatabase } from '@holdfast/testing';
import { FailoverModule } from '@holdfast/failover';
import { InboxModule } from '@holdfast/inbox';
import { SimbaModule } from '@holdfast/simba';

const [db, sqliteFile] = process.argv.slice(2);
const send = (message: unknown) => process.send?.(message);

async function main(): Promise<void> {
  const dataSource = await createTestDataSource(db as TestDatabase, {
    poolSize: 4,
    sqliteFile: sqliteFile || undefined,
  });
  const boot = async (prefix: string) => {
    @Module({
      imports: [
        SimbaModule.forRoot({ dataSource, tablePrefix: prefix, schema: 'create' }),
        InboxModule.forRoot({ dataSource, tablePrefix: prefix, schema: 'create', deliver: false }),
        FailoverModule.forRoot({
          store: { type: 'sql', dataSource, tablePrefix: prefix, schema: 'create' },
          cleanup: { enabled: false },
        }),
      ],
    })
    class ReplicaModule {}
    const app = await NestFactory.createApplicationContext(ReplicaModule, { logger: false });
    await app.close();
  };
  process.on('message', (m: { t: string; prefix?: string }) => {
    if (m.t === 'exit') {
      void dataSource.destroy().finally(() => process.exit(0));
      return;
    }
    if (m.t !== 'boot') return;
    boot(m.prefix!).then(
      () => send({ t: 'booted', prefix: m.prefix, ok: true }),
      (error: unknown) => send({ t: 'booted', prefix: m.prefix, ok: false, error: String(error) }),
    );
  });
  send({ t: 'ready' });
}

main().catch((error) => {
  send({ t: 'failed', error: String(error) });
  process.exit(1);
});
