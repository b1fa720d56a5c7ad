import { Test } from '@nestjs/testing';
import { SchemaManager, sqlClientFor } from '@holdfast/core/kit';
import { InboxModule, MessageAcceptor, type AcceptMessage, INBOX_TABLES } from '@holdfast/inbox';
import type { DataSource } from 'typeorm';

/**
 * Creates `<prefix>COR_MESSAGE` and accepts `messages` through a MessageAcceptor that does not
 * deliver (the multi-process tests' workers do), in the given cluster mode; returns their ids.
 */
export async function seedInbox(
  dataSource: DataSource,
  prefix: string,
  messages: AcceptMessage<unknown>[],
  cluster?: 'leader' | 'competing',
): Promise<string[]> {
  await new SchemaManager(sqlClientFor(dataSource)).apply(INBOX_TABLES.message, prefix, 'create');
  await new SchemaManager(sqlClientFor(dataSource)).apply(INBOX_TABLES.lease, prefix, 'create');
  // Workers with groupBy (schema 'check') need the group table too.
  await new SchemaManager(sqlClientFor(dataSource)).apply(INBOX_TABLES.group, prefix, 'create');
  const app = await Test.createTestingModule({
    imports: [
      InboxModule.forRoot({ dataSource, tablePrefix: prefix, schema: 'check', deliver: false, cluster }),
    ],
  })
    .compile()
    .then((m) => m.init());
  try {
    return (await app.get(MessageAcceptor).acceptAll(messages)).map((r) => r.id);
  } finally {
    await app.close();
  }
}
