import { Injectable } from '@nestjs/common';
import { InboxClock } from '../inbox.clock';
import { InboxMetrics } from '../metrics/inbox.metrics';
import type { Claimed } from '../store/cor-message.claim';
import type { PausedTypeFilter } from '../store/cor-message.paused';
import type { Now } from '../store/cor-message.rows';
import { InboxConnection } from '../store/inbox-connection';
import { ClaimLedger } from './claim-ledger';
import { DatabaseOutage } from './database-outage';

/**
 * One claim statement under a lease this node chose (ClaimLedger.nextLease), retried as the
 * metrics count it; a claim that got no answer is noted in the ledger (its rows, if it leased
 * any, are offered to the next claims), and an answer ends an outage.
 */
@Injectable()
export class LeasedClaim {
  constructor(
    private readonly connection: InboxConnection,
    private readonly clock: InboxClock,
    private readonly metrics: InboxMetrics,
    private readonly ledger: ClaimLedger,
    private readonly outage: DatabaseOutage,
  ) {}

  /** Claims up to `size` due messages of types not `paused`, at `clockNow` (the injected clock, if any). */
  async claim(size: number, clockNow: Now, paused: readonly PausedTypeFilter[]): Promise<Claimed> {
    const { connection, clock, ledger } = this;
    const claimed = await this.metrics.retry('claim', async () => {
      const lease = await ledger.nextLease(clockNow, () => clock.now());
      try {
        return await connection.store.claims.claim(size, clockNow, lease, undefined, paused);
      } catch (error) {
        ledger.claimUnanswered(lease.until);
        throw error;
      }
    });
    this.outage.answered();
    return claimed;
  }
}
