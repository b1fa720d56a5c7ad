import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { findSchedulerRegistry, HoldfastTimers, keepProcessAlive, withTimeout } from '@holdfast/core/kit';
import { ModuleRef } from '@nestjs/core';
import { InboxHandlerRegistry } from '../explorer/inbox-handler.registry';
import { InboxClock } from '../inbox.clock';
import { INBOX_OPTIONS } from '../inbox.tokens';
import { InboxMetrics } from '../metrics/inbox.metrics';
import type { ResolvedInboxOptions } from '../options/resolved-inbox-options';
import { InboxConnection } from '../store/inbox-connection';
import { BatchClaimer } from './batch-claimer';
import { BatchDelivery } from './batch-delivery';
import { ClaimLedger } from './claim-ledger';
import { MessageFenceStatements } from '../fencing/message-fence';
import { DeliveryTracing } from '../tracing/delivery-tracing';
import { DatabaseOutage } from './database-outage';
import type { DeliveryReport } from './delivery-run';
import { deliverySettings, type DeliverySettings } from './delivery-settings';
import { ExpiryCleanup } from './expiry-cleanup';
import { HandlerSlots, InboxShutdownError } from './handler-run';
import { OutcomeRecorder } from './outcome-recorder';
import { InboxHistory } from '../history/inbox-history.service';
import { PollSchedule } from './poll-schedule';

export { errorText } from './handler-run';
export type { DeliveryReport } from './delivery-run';

type TimerKind = 'poll' | 'cleanup' | 'heartbeat' | 'flush';

/**
 * The delivery loop of a delivering node, assembled from its parts: the schedule of its runs
 * (PollSchedule), the work of one run (BatchDelivery: a claim from BatchClaimer, delivered by a
 * DeliveryRun), the recording of outcomes (OutcomeRecorder), what this node holds (ClaimLedger:
 * heartbeats and completion deletes), the expiry cleanup beside it (ExpiryCleanup), and a
 * database outage logged once (DatabaseOutage). This service starts and drains them, and is the
 * public API of delivery.
 */
@Injectable()
export class InboxDelivery implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(InboxDelivery.name);
  private readonly settings: DeliverySettings;
  /** `holdfast:inbox:{poll,cleanup,heartbeat,flush}:<table>`, in the app's SchedulerRegistry. */
  private timers = new HoldfastTimers();
  private running = false;
  /** Lets the process end again: the delivery loop holds it while it runs (see keepProcessAlive). */
  private releaseProcess?: () => void;
  private readonly outage: DatabaseOutage;
  /** What this node has claimed and not finished: heartbeats, completion deletes, lost claims. */
  private readonly ledger: ClaimLedger;
  private readonly expiry: ExpiryCleanup;
  private readonly claimer: BatchClaimer;
  private readonly batches: BatchDelivery;
  private readonly schedule: PollSchedule;
  /** The opt-in history and stats (a property: the constructor has its six already). */
  @Inject(InboxHistory) private readonly history!: InboxHistory;

  constructor(
    private readonly connection: InboxConnection,
    registry: InboxHandlerRegistry,
    clock: InboxClock,
    metrics: InboxMetrics,
    @Inject(INBOX_OPTIONS) private readonly options: ResolvedInboxOptions,
    private readonly moduleRef: ModuleRef,
  ) {
    const settings = (this.settings = deliverySettings(options));
    const logger = this.logger;
    const outage = (this.outage = new DatabaseOutage(logger, () => connection.store.table));
    const timers = () => this.timers;
    const running = () => this.running;
    const ledger = (this.ledger = new ClaimLedger({
      connection,
      clock,
      metrics,
      outage,
      logger,
      timers,
      timerName: (what) => this.timerName(what),
      leaseMs: settings.leaseMs,
      flushAt: () => (connection.sql.dialect.singleConnection ? settings.flushAtOneWriter : settings.flushAt),
      flushMs: settings.flushMs,
    }));
    this.expiry = new ExpiryCleanup({
      connection,
      clock,
      metrics,
      options,
      outage,
      logger,
      timers,
      timerName: () => this.timerName('cleanup'),
      cleanupMs: settings.cleanupMs,
      running,
      history: () => this.history,
    });
    this.claimer = new BatchClaimer({ connection, clock, metrics, options, ledger, outage, logger });
    const recorder = new OutcomeRecorder({
      connection,
      clock,
      metrics,
      logger,
      ledger,
      backoff: settings.backoff,
      unhandledMs: settings.unhandledMs,
      history: () => this.history,
    });
    const slots = new HandlerSlots(settings.concurrency);
    let fenceStatements: MessageFenceStatements | undefined;
    this.batches = new BatchDelivery({
      connection,
      claimer: this.claimer,
      ledger,
      logger,
      run: {
        options,
        registry,
        slots,
        ledger,
        recorder,
        outage,
        metrics,
        logger,
        deadlines: settings.deadlines,
        unhandledMs: settings.unhandledMs,
        running,
        releaseNodeSlot: () => slots.releaseNode(),
        fence: {
          statements: () => (fenceStatements ??= new MessageFenceStatements(connection.store.on)),
          leaseEndsOf: (id) => ledger.leaseEndsOf(id),
        },
        tracing: new DeliveryTracing(() => connection.store.table),
      },
    });
    this.schedule = new PollSchedule({
      options,
      pollMs: settings.pollMs,
      outage,
      logger,
      timers,
      timerName: () => this.timerName('poll'),
      running,
      run: () => this.batches.deliverNext(true),
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.options.deliver) return;
    // Holdfast's connections first (ConnectionBudget): nothing is claimed before they are open,
    // and an instance the server has no room for claims nothing.
    await this.connection.admitted();
    await this.connection.leadership.start();
    this.timers = new HoldfastTimers(findSchedulerRegistry(this.moduleRef));
    this.running = true;
    this.releaseProcess = keepProcessAlive(`inbox delivery (${this.connection.store.table})`);
    this.schedule.schedule(this.settings.pollMs);
    this.expiry.schedule(this.settings.cleanupMs);
  }

  /**
   * Drains: no new claim and no new handler from now on; what this node claimed and has not
   * started is handed back at once (due now, so another node takes it at its next poll); running
   * handlers get `shutdownGrace` to finish, then their signal aborts and their messages are
   * handed back too. Then it leaves the leader mutex, before TypeORM closes the DataSource.
   */
  async beforeApplicationShutdown(): Promise<void> {
    try {
      await this.drain();
    } finally {
      // After app.close() nothing of the inbox holds the process, whatever the drain met.
      this.releaseProcess?.();
      this.releaseProcess = undefined;
    }
  }

  private async drain(): Promise<void> {
    const { graceMs } = this.settings;
    this.running = false;
    // No more polls or cleanups; heartbeats and completion flushes go on while handlers drain.
    this.timers.clear(this.timerName('poll'));
    this.timers.clear(this.timerName('cleanup'));
    const handedBack = this.claimer.handBackPrefetched();
    const finished = Promise.all([this.schedule.cycle?.catch(() => undefined), this.batches.waitForIdle()]);
    if ((await withTimeout(finished, graceMs, () => 'timeout' as const)) === 'timeout') {
      const left = this.ledger.ids();
      this.ledger.abortRunning(new InboxShutdownError(graceMs));
      await this.ledger
        .handBack(left)
        .catch((error) =>
          this.logger.warn(`Could not hand back ${left.length} message(s): ${(error as Error).message}`),
        );
      this.logger.warn(
        `${left.length} message(s) still running after shutdownGrace (${graceMs} ms): their handlers were aborted ` +
          `and the messages handed back to other nodes`,
      );
    }
    await handedBack;
    await this.ledger.flush().catch(() => undefined);
    this.ledger.stop();
    this.settings.deadlines?.clear();
    this.timers.clearAll();
    if (this.options.deliver) await this.connection.leadership.stop();
  }

  /**
   * An accept on this node: starts a delivery run now instead of at the next poll (or right after
   * the run in progress). Other nodes still find the message at their next poll.
   */
  wake(): void {
    this.schedule.wake();
  }

  /**
   * A type was paused or resumed (here or on another node, told by NOTIFY): the next claim reads
   * the paused types again, and it runs now.
   */
  pausesChanged(): void {
    this.connection.pauses?.markStale();
    this.schedule.wake(true);
  }

  /** `holdfast:inbox:<what>:<table>`, this node's timers in the SchedulerRegistry. */
  private timerName(what: TimerKind): string {
    return `holdfast:inbox:${what}:${this.connection.store.table}`;
  }

  /** True when this node delivers now (always in competing mode; the mutex owner in leader mode). */
  isDelivering(): boolean {
    return this.options.deliver && this.connection.leadership.isLeader();
  }

  /**
   * Deletes every expired message in bounded batches until none is left (see ExpiryCleanup).
   * Runs now on this node when called (on a delivering node); the schedule calls it on one node
   * per tick for the whole cluster.
   */
  cleanupExpired(): Promise<number> {
    return this.expiry.run();
  }

  /**
   * Claims and delivers one batch of due messages (one run at a time per node); resolves once
   * what was delivered is deleted.
   */
  deliverDue(): Promise<DeliveryReport> {
    return this.batches.deliverNext(false);
  }
}
