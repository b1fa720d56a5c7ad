import { Injectable, Module, type INestApplicationContext, type LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { InboxHandler, InboxModule, type InboxMessage, type InboxModuleOptions } from '@holdfast/inbox';
import type { DataSource } from 'typeorm';

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
