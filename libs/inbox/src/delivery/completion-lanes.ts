import { Injectable, Logger } from '@nestjs/common';
import { ConnectionBudgetError, monotonicMillis } from '@holdfast/core/kit';
import type { CorMessageCompletion } from '../store/cor-message.completion';
import { InboxConnection } from '../store/inbox-connection';
import { DELIVERY_LOG_CONTEXT, DeliveryState } from './delivery-state';

/** How long the lane stays open with no full delete on it; then it is closed. */
export const DELETE_LANE_IDLE_MS = 30_000;
/** After the server had no room for the lane, how long before it is asked for again. */
export const DELETE_LANE_REFUSED_MS = 60_000;

/**
 * Where the claim ledger's statements go: heartbeats on the lease lane, hand-backs on the inbox's
 * lane, and the completion deletes of a node that delivers a backlog on a lane of their own.
 *
 * On the inbox's lane, deletes and claims take turns on one connection, and a delivered message
 * keeps its handler slot until its delete is done. A database a few milliseconds away then sets
 * the pace of a backlog: a claim's two deletes and the next claim, one round trip after another.
 * The first full flush (`flushAt` delivered messages waiting) asks the connection budget for a
 * lane of two connections, in the background; that flush's delete still runs on the inbox's
 * lane. Once the lane is open, every full flush deletes on it, two side by side, beside the
 * claims. The small flushes of a node delivering a trickle stay on the inbox's lane.
 *
 * The lane closes after `DELETE_LANE_IDLE_MS` with no full flush, so an idle replica holds only
 * its lanes. The budget admits it at once or refuses it, never waiting, and only while a tenth
 * of the server's connections stay free (see ConnectionBudget.admit), so the lanes of a busy
 * fleet never take the room a newcomer needs to boot. Refused, the deletes stay on the inbox's
 * lane, and the lane is asked for again after `DELETE_LANE_REFUSED_MS`. SQLite and
 * `coordinationPool: false` have no lanes, so the deletes stay where they are.
 */
@Injectable()
export class CompletionLanes {
  private readonly logger = new Logger(DELIVERY_LOG_CONTEXT);
  private lane?: CorMessageCompletion;
  private opening = false;
  /** The lane is not asked for before this monotonic time (refused, or none on this database). */
  private notBefore = 0;
  private lastUse = 0;
  private inFlight = 0;
  private stopped = false;
  /** DELETE_LANE_IDLE_MS (a spec shortens it). */
  idleMs = DELETE_LANE_IDLE_MS;

  constructor(
    private readonly connection: InboxConnection,
    private readonly state: DeliveryState,
  ) {}

  /** The heartbeats' statements (on the lease lane). */
  get heartbeats(): CorMessageCompletion {
    return this.connection.heartbeats;
  }

  /** The inbox's lane's statements (hand-backs, and the deletes when the deletes' lane is closed). */
  get inboxLane(): CorMessageCompletion {
    return this.connection.store.completion;
  }

  /** One statement at a time on one connection (SQLite): deletes of a whole claim. */
  get oneWriter(): boolean {
    return this.connection.sql.dialect.singleConnection;
  }

  /** Whether the deletes' lane is open now. */
  get isOpen(): boolean {
    return this.lane !== undefined;
  }

  /**
   * Runs one completion delete: a full flush's on the lane when it is open, every other one on the
   * inbox's lane. A full flush asks for the lane when it is closed.
   */
  async run<T>(full: boolean, work: (deletes: CorMessageCompletion) => Promise<T>): Promise<T> {
    const lane = full ? this.lane : undefined;
    if (!lane) {
      if (full) this.request();
      return work(this.inboxLane);
    }
    this.inFlight++;
    this.lastUse = monotonicMillis();
    try {
      return await work(lane);
    } finally {
      this.inFlight--;
    }
  }

  /** Closes the deletes' lane (the drain is done): no delete runs on it any more. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.state.timers.clear(this.timerName);
    const lane = this.lane;
    this.lane = undefined;
    if (lane) await this.connection.closeDeleteLane(lane).catch(() => undefined);
  }

  private get timerName(): string {
    return this.state.timerName('deletes');
  }

  private request(): void {
    if (this.opening || this.stopped || monotonicMillis() < this.notBefore) return;
    this.opening = true;
    this.connection
      .openDeleteLane()
      .then(
        (lane) => this.opened(lane),
        (error: Error) => this.refused(error),
      )
      .finally(() => (this.opening = false));
  }

  private opened(lane: CorMessageCompletion | undefined): void {
    if (!lane) {
      this.notBefore = Infinity; // no lanes on this database
      return;
    }
    if (this.stopped) {
      void this.connection.closeDeleteLane(lane).catch(() => undefined);
      return;
    }
    this.lane = lane;
    this.lastUse = monotonicMillis();
    this.logger.debug(`Deletes on a connection of their own while this node delivers a backlog`);
    this.state.timers.set(this.timerName, this.idleMs, () => this.closeIfIdle());
  }

  private refused(error: Error): void {
    this.notBefore = monotonicMillis() + DELETE_LANE_REFUSED_MS;
    const why = error instanceof ConnectionBudgetError ? 'the server has no room for it' : error.message;
    this.logger.log(
      `Deletes stay on the inbox's connection (no connection of their own: ${why}); ` +
        `asking again in ${DELETE_LANE_REFUSED_MS / 1000} s`,
    );
  }

  private closeIfIdle(): void {
    const lane = this.lane;
    if (!lane || this.stopped) return;
    const idle = monotonicMillis() - this.lastUse;
    if (this.inFlight > 0 || idle < this.idleMs) {
      const again = idle < this.idleMs ? this.idleMs - idle : 1_000;
      this.state.timers.set(this.timerName, again, () => this.closeIfIdle());
      return;
    }
    this.lane = undefined;
    void this.connection.closeDeleteLane(lane).catch(() => undefined);
  }
}
