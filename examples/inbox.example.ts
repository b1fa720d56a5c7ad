// README tour: @holdfast/inbox. Type-checked with the rest of the repo (npm run typecheck).
import { Injectable, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { InboxHandler, InboxModule, MessageAcceptor, type InboxMessage } from '@holdfast/inbox';

@Injectable()
export class OrderHandler {
  @InboxHandler({ namespace: 'shop', name: 'order-placed' })
  async handle(message: InboxMessage<{ orderId: string }>): Promise<void> {
    console.log('deliver order', message.payload.orderId); // throw to retry with backoff
  }
}

@Injectable()
export class OrdersWebhook {
  constructor(private readonly inbox: MessageAcceptor) {}

  receive(orderId: string) {
    return this.inbox.accept({
      id: `order-${orderId}`,
      type: { namespace: 'shop', name: 'order-placed' },
      payload: { orderId },
      ttl: 'PT10M',
    });
  }
}

@Module({
  imports: [
    TypeOrmModule.forRoot({ type: 'mariadb', url: process.env.DATABASE_URL, timezone: 'Z' }),
    InboxModule.forRoot({
      batchSize: 100,
      retry: { maxRetries: 5, initialDelay: '1s', multiplier: 2 },
      schema: 'create',
    }),
  ],
  providers: [OrderHandler, OrdersWebhook],
})
export class InboxExampleModule {}
