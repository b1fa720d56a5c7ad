import { Injectable, type DynamicModule, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { TestDatabaseContext } from '@holdfast/testing';
import { SimbaModule } from '@holdfast/simba';
import {
  InboxDelivery,
  InboxHandler,
  InboxModule,
  MessageAcceptor,
  MessageManagement,
  type InboxHandlerContext,
  type InboxMessage,
  type InboxModuleOptions,
} from '../src';

/** What the test handlers saw, and how they should behave. */
export class HandlerProbe {
  readonly calls: InboxMessage[] = [];
  /** Return an Error to throw for a message, or a promise to await. */
  behaviour: (message: InboxMessage, context: InboxHandlerContext) => Error | Promise<void> | void = () =>
    undefined;
}

@Injectable()
export class TestHandlers {
  constructor(private readonly probe: HandlerProbe) {}

  @InboxHandler({ namespace: 'test', name: 'order-placed' })
  async orderPlaced(message: InboxMessage, context: InboxHandlerContext): Promise<void> {
    this.probe.calls.push(message);
    const outcome = this.probe.behaviour(message, context);
    if (outcome instanceof Error) throw outcome;
    await outcome;
  }

  @InboxHandler({ name: 'blob' })
  async blob(message: InboxMessage<Buffer>): Promise<void> {
    this.probe.calls.push(message);
  }
}

export interface InboxTestApp {
  app: INestApplicationContext;
  acceptor: MessageAcceptor;
  management: MessageManagement;
  delivery: InboxDelivery;
  probe: HandlerProbe;
  close(): Promise<void>;
}

/** A Nest application context with the inbox on the test database (SimbaModule for leader mode). */
export async function createInboxApp(
  ctx: TestDatabaseContext,
  options: Partial<InboxModuleOptions> = {},
  { waitForLeadership = true, imports = [] as DynamicModule[] } = {},
): Promise<InboxTestApp> {
  const probe = new HandlerProbe();
  const leader = ctx.db === 'sqlite' || options.cluster === 'leader';
  const moduleRef = await Test.createTestingModule({
    imports: [
      ...imports,
      InboxModule.forRoot({
        dataSource: ctx.dataSource,
        tablePrefix: ctx.prefix,
        schema: 'create',
        // The tests drive delivery themselves; the loop only runs its first (empty) poll.
        pollInterval: '1h',
        cleanupInterval: '1h',
        wakeOnAccept: false,
        ...options,
      }),
      ...(leader
        ? [
            SimbaModule.forRoot({
              dataSource: ctx.dataSource,
              tablePrefix: ctx.prefix,
              schema: 'create',
              ttl: '10s',
              transition: '6s',
            }),
          ]
        : []),
    ],
    providers: [{ provide: HandlerProbe, useValue: probe }, TestHandlers],
  }).compile();
  const app = await moduleRef.init();
  const delivery = app.get(InboxDelivery);
  if (options.deliver !== false && waitForLeadership) {
    // Leader mode: wait until this node owns the mutex.
    for (let i = 0; i < 200 && !delivery.isDelivering(); i++) await new Promise((r) => setTimeout(r, 25));
  }
  return {
    app,
    acceptor: app.get(MessageAcceptor),
    management: app.get(MessageManagement),
    delivery,
    probe,
    close: () => app.close(),
  };
}

/** A clock the test moves by hand, in epoch ms. */
export class TestClock {
  constructor(public now = Date.UTC(2026, 0, 1)) {}
  readonly read = () => this.now;
  advance(ms: number): void {
    this.now += ms;
  }
}
