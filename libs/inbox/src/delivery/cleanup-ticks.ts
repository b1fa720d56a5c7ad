import { Inject, Injectable } from '@nestjs/common';
import { instanceId, isDuplicateKeyError, tableName } from '@holdfast/core/kit';
import { InboxClock } from '../inbox.clock';
import { INBOX_OPTIONS } from '../inbox.tokens';
import { InboxMetrics } from '../metrics/inbox.metrics';
import type { ResolvedInboxOptions } from '../options/resolved-inbox-options';
import { InboxConnection } from '../store/inbox-connection';
import { InboxLeaseStatements, type TickClaim } from '../store/inbox-lease.statements';
import { INBOX_LEASE_TABLE } from '../store/inbox-lease.table';
import { DELIVERY_SETTINGS, type DeliverySettings } from './delivery-settings';

/**
 * Who runs the expiry cleanup at a scheduled tick: one node per tick for the whole cluster.
 *
 * Ticks are numbered by the database clock: tick = floor(database now in ms / cleanupInterval).
 * In competing mode a node claims a tick by moving the `TICK` of its row in
 * `<prefix>HOLDFAST_INBOX_LEASE` forward (`UPDATE … SET TICK = t WHERE TICK < t`, one row
 * locked for one statement); the first node to do so in a tick cleans, every other node's
 * attempt in that tick updates nothing and skips. No lease has to expire: when the node that
 * cleaned dies, the next tick is claimed by whichever node gets there first. Nodes time their
 * ticks to the database clock's tick boundaries, so the cluster cleans once per interval.
 *
 * In leader mode the leader cleans (as the delivery does); no table is used.
 */
@Injectable()
export class CleanupTicks {
  readonly holder = instanceId();
  private readonly table: string;
  /** The cleanup interval: one tick each. */
  private readonly intervalMs: number;
  private leaseNameOfTable?: string;

  constructor(
    private readonly connection: InboxConnection,
    private readonly clock: InboxClock,
    private readonly metrics: InboxMetrics,
    @Inject(INBOX_OPTIONS) options: ResolvedInboxOptions,
    @Inject(DELIVERY_SETTINGS) settings: DeliverySettings,
  ) {
    this.intervalMs = settings.cleanupMs;
    this.table = tableName(options.tablePrefix, INBOX_LEASE_TABLE.name);
  }

  /** `cleanup:<table>` (the inbox's table is known once the module has started). */
  private get leaseName(): string {
    return (this.leaseNameOfTable ??= `cleanup:${this.connection.store.table}`.slice(0, 128));
  }

  /** true: this node cleans at this tick; false: another node does (counted as skipped). */
  async claim(): Promise<boolean> {
    const leadership = this.connection.leadership;
    const mine = leadership.mode === 'competing' ? await this.claimTick() : leadership.isLeader();
    if (mine) this.metrics.cleanupTickRun();
    else this.metrics.cleanupTickSkipped();
    return mine;
  }

  /** Milliseconds from now (database clock) to just after the next tick boundary. */
  async untilNextTick(): Promise<number> {
    const now = await this.clock.now();
    if (!Number.isFinite(now)) return this.intervalMs;
    // A little past the boundary, so a node whose estimate runs early still lands in the new tick.
    return this.intervalMs - (now % this.intervalMs) + Math.min(50, Math.floor(this.intervalMs / 20));
  }

  private async claimTick(): Promise<boolean> {
    const sql = this.connection.sql;
    const statements = new InboxLeaseStatements(sql.dialect, this.table);
    const claim: TickClaim = {
      leaseName: this.leaseName,
      holder: this.holder,
      intervalMs: this.intervalMs,
      now: await this.clock.bindable(),
    };
    const update = statements.claimTick(claim);
    const claimed = await this.metrics.retry('cleanup-lease', () => sql.execute(update));
    if (claimed > 0) return true;
    // No row yet (first tick of this inbox), or this tick is taken already.
    const insert = statements.insertTick(claim);
    try {
      await sql.execute(insert);
      return true;
    } catch (error) {
      if (isDuplicateKeyError(error)) return false;
      throw error;
    }
  }
}
