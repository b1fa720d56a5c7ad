import { Injectable, Module, type INestApplicationContext, type LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { InboxHandler, InboxModule, type InboxMessage, type InboxModuleOptions } from '@holdfast/inbox';
import type { DataSource } from 'typeorm';

/**
 * The port of the server a test database URL names (HOLDFAST_TEST_PG_URL, HOLDFAST_TEST_MARIADB_URL,
 * else the shared servers): what a TcpProxy in front of it forwards to.
 */
export function testServerPort(db: 'postgres' | 'mariadb'): number {
  const url = new URL(
    db === 'postgres'
      ? (process.env.HOLDFAST_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test')
      : (process.env.HOLDFAST_TEST_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306/test'),
  );
  return Number(url.port || (db === 'postgres' ? 5432 : 3306));
}

/**
 * An application with one inbox on `dataSource` (competing nodes, table created) and, unless
 * `handle` is left out, a handler of `type` that runs it for each message.
 */
export async function inboxNode(node: {
  dataSource: DataSource;
  prefix: string;
  type: { namespace: string; name: string };
  handle?: (message: InboxMessage) => void | Promise<void>;
  inbox?: Partial<InboxModuleOptions>;
  logger?: LogLevel[] | false;
}): Promise<INestApplicationContext> {
  const { handle } = node;
  @Injectable()
  class Handler {
    @InboxHandler(node.type)
    async handle(message: InboxMessage): Promise<void> {
      await handle!(message);
    }
  }
  @Module({
    imports: [
      InboxModule.forRoot({
        dataSource: node.dataSource,
        tablePrefix: node.prefix,
        schema: 'create',
        cluster: 'competing',
        ...node.inbox,
      }),
    ],
    providers: handle ? [Handler] : [],
  })
  class NodeModule {}
  return NestFactory.createApplicationContext(NodeModule, { logger: node.logger ?? false });
}
