// One booting replica: connects, then on each 'boot' message runs the schema step for fresh
// tables and reports how it went. Several of these get the message at the same moment.
import { SchemaManager, sqlClientFor } from '@holdfast/core/kit';
import { createTestDataSource, type TestDatabase } from '@holdfast/testing';
import { BOOT_TABLES } from './schema-boot.tables';

async function main(): Promise<void> {
  const [db, sqliteFile] = process.argv.slice(2) as [TestDatabase, string];
  const dataSource = await createTestDataSource(db, { sqliteFile: sqliteFile || undefined });
  const schema = new SchemaManager(sqlClientFor(dataSource));
  process.on('message', async (m: { t: string; prefix?: string }) => {
    if (m.t === 'exit') {
      await dataSource.destroy();
      process.exit(0);
    }
    if (m.t !== 'boot') return;
    try {
      await Promise.all(BOOT_TABLES.map((spec) => schema.apply(spec, m.prefix!, 'create')));
      process.send!({ t: 'booted', prefix: m.prefix, ok: true });
    } catch (error) {
      process.send!({ t: 'booted', prefix: m.prefix, ok: false, error: String(error) });
    }
  });
  process.send!({ t: 'ready' });
}

main().catch((error) => {
  process.send!({ t: 'failed', error: String(error) });
  process.exit(1);
});
