import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { declareMetrics, type MetricAttributes } from '@holdfast/core/kit';
import { InboxClock } from '../inbox.clock';
import { INBOX_NAME } from '../inbox.tokens';
import { MessageManagement } from '../management/message-management.service';

type Observe = { observe(value: number, attributes?: MetricAttributes): void };

/** The inbox's forRoot name (namespaced, as OpenTelemetry's conventions ask). */
const INBOX = 'holdfast.inbox.name';

/**
 * The gauges an on-call engineer alerts on, per inbox (attribute `holdfast.inbox.name`, its forRoot name):
 * how many messages wait for delivery, how old the oldest due one is, and how many are parked.
 * They are the table's figures, read when the SDK collects (one count and one one-row list per
 * collection), so every instance reports the same value: alert on max() over instances.
 */
@Injectable()
export class InboxGauges implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(InboxGauges.name);
  private readonly gauges = declareMetrics('inbox', {
    depth: {
      kind: 'gauge',
      name: 'depth',
      unit: '{message}',
      description: 'Messages waiting for delivery (due now or retrying after a backoff), per inbox',
      attributes: [INBOX],
    },
    oldestDueAge: {
      kind: 'gauge',
      name: 'oldest_due.age',
      unit: 's',
      description: 'Age of the oldest message due for delivery (0 when none is due), per inbox',
      attributes: [INBOX],
    },
    parkedMessages: {
      kind: 'gauge',
      name: 'parked_messages',
      unit: '{message}',
      description: 'Messages parked after maxRetries and not yet retried or deleted, per inbox',
      attributes: [INBOX],
    },
  });
  private latest?: Promise<{ depth: number; oldestDueAge: number; parked: number }>;
  private warned = false;

  constructor(
    private readonly management: MessageManagement,
    private readonly clock: InboxClock,
    @Inject(INBOX_NAME) private readonly name: string,
  ) {}

  onApplicationBootstrap(): void {
    this.gauges.depth.addCallback(this.observeDepth);
    this.gauges.oldestDueAge.addCallback(this.observeOldest);
    this.gauges.parkedMessages.addCallback(this.observeParked);
  }

  onModuleDestroy(): void {
    this.gauges.depth.removeCallback?.(this.observeDepth);
    this.gauges.oldestDueAge.removeCallback?.(this.observeOldest);
    this.gauges.parkedMessages.removeCallback?.(this.observeParked);
  }

  /**
   * The three figures of one collection: the SDK calls the three callbacks one after the other,
   * so they share one read (the first starts it, the next ones of the same collection reuse it).
   */
  private read(): Promise<{ depth: number; oldestDueAge: number; parked: number }> {
    if (this.latest) return this.latest;
    const reading = (async () => {
      const [now, counts, [oldest]] = await Promise.all([
        this.clock.now(),
        this.management.count(),
        this.management.list({ status: 'due', limit: 1 }),
      ]);
      return {
        depth: counts.due + counts.retrying,
        oldestDueAge: oldest ? Math.max(0, now - oldest.inserted.getTime()) / 1000 : 0,
        parked: counts.parked,
      };
    })();
    this.latest = reading;
    void reading.then(
      () => setImmediate(() => this.release(reading)),
      () => this.release(reading),
    );
    return reading;
  }

  private release(reading: Promise<unknown>): void {
    if (this.latest === reading) this.latest = undefined;
  }

  private observe(pick: (f: { depth: number; oldestDueAge: number; parked: number }) => number) {
    return async (result: Observe): Promise<void> => {
      try {
        result.observe(pick(await this.read()), { [INBOX]: this.name });
        this.warned = false;
      } catch (error) {
        // No figure rather than a wrong one; one line per outage (the health indicator says more).
        if (!this.warned) this.logger.warn(`Inbox gauges of '${this.name}' not read: ${String(error)}`);
        this.warned = true;
      }
    };
  }

  private readonly observeDepth = this.observe((f) => f.depth);
  private readonly observeOldest = this.observe((f) => f.oldestDueAge);
  private readonly observeParked = this.observe((f) => f.parked);
}
