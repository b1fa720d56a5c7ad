import { Inject, Injectable } from '@nestjs/common';
import type { DeadlineQueue, TraceSpan as Span } from '@holdfast/core/kit';
import type { InboxMessage, MessageType } from '../inbox-message';
import { InboxHandlerRegistry, type RegisteredHandler } from '../explorer/inbox-handler.registry';
import type { MessageRow } from '../store/cor-message.rows';
import { DeliveryTracing } from '../tracing/delivery-tracing';
import { DeliveryFence } from './delivery-fence';
import { DELIVERY_SETTINGS, type DeliverySettings } from './delivery-settings';
import { HandlerRun, HandlerSlots } from './handler-run';

/**
 * What a handler's call for a claimed message takes: the handler of its type, a slot of the
 * handler and of the node (HandlerSlots), the HandlerRun that can give it up (its claim fenced,
 * its time limit on one queue), and its span (DeliveryTracing).
 */
@Injectable()
export class HandlerCalls {
  private readonly deadlines: DeadlineQueue<HandlerRun> | undefined;
  /** Gives a node slot back once its message is deleted (see HandlerSlots). */
  readonly releaseNodeSlot: () => void;

  constructor(
    private readonly registry: InboxHandlerRegistry,
    readonly slots: HandlerSlots,
    private readonly fence: DeliveryFence,
    readonly tracing: DeliveryTracing,
    @Inject(DELIVERY_SETTINGS) settings: DeliverySettings,
  ) {
    this.deadlines = settings.deadlines;
    this.releaseNodeSlot = () => slots.releaseNode();
  }

  /** The handler of `type` (none: unhandled). */
  find(type: MessageType): RegisteredHandler | undefined {
    return this.registry.find(type);
  }

  /** The run of `row`'s call, fenced with the lease end its claim wrote. */
  run(row: MessageRow): HandlerRun {
    return new HandlerRun(row.id, row.nextRetry ?? NaN, this.fence);
  }

  /** Calls the handler within the attempt's span; undefined when the call ended synchronously. */
  call(
    run: HandlerRun,
    span: Span | undefined,
    handler: RegisteredHandler,
    message: InboxMessage,
  ): Promise<void> | undefined {
    return this.tracing.within(span, () =>
      run.execute(() => handler.handle(message, run.context), this.deadlines),
    );
  }
}
