import { BeforeApplicationShutdown, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { InboxConnection } from '../store/inbox-connection';
import { BatchDelivery } from './batch-delivery';
import { DeliveryDrain } from './delivery-drain';
import type { DeliveryReport } from './delivery-run';
import { DeliveryState } from './delivery-state';
import { ExpiryCleanup } from './expiry-cleanup';
import { PollSchedule } from './poll-schedule';

export { errorText } from './handler-run';
export type { DeliveryReport } from './delivery-run';

/**
 * The delivery loop of a delivering node, and the public API of delivery. Its parts are the
 * module's providers (delivery.providers.ts): the schedule of its runs (PollSchedule), the work of
 * one run (BatchDelivery: a claim from BatchClaimer, delivered by DeliveryRuns), the recording of
 * outcomes (OutcomeRecorder), what this node holds (ClaimLedger: heartbeats and completion
 * deletes), the expiry cleanup beside it (ExpiryCleanup), a database outage logged once
 * (DatabaseOutage), and what they share while the loop runs (DeliveryState). This service starts
 * them and drains them (DeliveryDrain).
 */
@Injectable()
export class InboxDelivery implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    private readonly connection: InboxConnection,
    private readonly state: DeliveryState,
    private readonly schedule: PollSchedule,
    private readonly batches: BatchDelivery,
    private readonly expiry: ExpiryCleanup,
    private readonly drainer: DeliveryDrain,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.state.deliver) return;
    // Holdfast's connections first (ConnectionBudget): nothing is claimed before they are open,
    // and an instance the server has no room for claims nothing.
    await this.connection.admitted();
    await this.connection.leadership.start();
    this.state.start();
    this.schedule.start();
    this.expiry.start();
  }

  /**
   * Drains: no new claim and no new handler from now on; what this node claimed and has not
   * started is handed back at once (due now, so another node takes it at its next poll); running
   * handlers get `shutdownGrace` to finish, then their signal aborts and their messages are
   * handed back too. Then it leaves the leader mutex, before TypeORM closes the DataSource.
   */
  async beforeApplicationShutdown(): Promise<void> {
    try {
      await this.drainer.drain();
      if (this.state.deliver) await this.connection.leadership.stop();
    } finally {
      // After app.close() nothing of the inbox holds the process, whatever the drain met.
      this.state.release();
    }
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

  /** True when this node delivers now (always in competing mode; the mutex owner in leader mode). */
  isDelivering(): boolean {
    return this.state.deliver && this.connection.leadership.isLeader();
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
