import { Injectable, Logger } from '@nestjs/common';
import type { MessageRow, Now } from '../store/cor-message.rows';
import { InboxConnection } from '../store/inbox-connection';
import type { PermitGrant, PermitRequest } from '../store/inbox-rate.statements';
import { InboxMetrics } from '../metrics/inbox.metrics';
import { DELIVERY_LOG_CONTEXT } from './delivery-state';

/**
 * The inbox option `rateLimits` applied to a claim: for each limited type name among the claimed
 * rows, permits are taken in the window of the claim's database clock (InboxRateStatements.take);
 * the rows beyond them go back at once, due at the start of the key's next window, without an
 * attempt counted (RETRIES unchanged), and without a failure recorded. A claim without a limited
 * type costs nothing more.
 */
@Injectable()
export class RateLimiter {
  private readonly logger = new Logger(DELIVERY_LOG_CONTEXT);

  constructor(
    private readonly connection: InboxConnection,
    private readonly metrics: InboxMetrics,
  ) {}

  /**
   * The rows this node may deliver now (in the claim's order). `now` is the database clock the
   * claim read (or the test clock); `bindNow` what the release binds as its clock.
   */
  async admit(rows: MessageRow[], now: number, bindNow: Now): Promise<MessageRow[]> {
    const rates = this.connection.rates;
    if (!rates || !rows.length) return rows;
    const byKey = new Map<string, MessageRow[]>();
    for (const row of rows) {
      if (!rates.limits.has(row.name)) continue;
      const list = byKey.get(row.name);
      if (list) list.push(row);
      else byKey.set(row.name, [row]);
    }
    if (!byKey.size) return rows;
    const requests: PermitRequest[] = [...byKey].map(([key, list]) => ({
      key,
      want: list.length,
      ...rates.limits.get(key)!,
    }));
    const { connection, metrics, logger } = this;
    // The claim's own clock (a claim that returned rows read it); else the database's, now.
    const at = Number.isFinite(now) ? now : await connection.store.sql.nowMillis();
    let grants: PermitGrant[];
    try {
      grants = await metrics.retry('rate', () => rates.statements.take(requests, at));
    } catch (error) {
      // No permits could be counted: the limited rows go back as they are, due at once, never
      // delivered past a limit the node could not count.
      const ids = [...byKey.values()].flat().map((row) => row.id);
      logger.warn(`Could not take rate-limit permits: ${(error as Error).message}`);
      await this.release(ids, 0, bindNow);
      const limited = new Set(ids);
      return rows.filter((row) => !limited.has(row.id));
    }
    const refused = new Set<string>();
    const releases: Promise<unknown>[] = [];
    for (const { key, granted, windowEnd } of grants) {
      const over = byKey.get(key)!.slice(granted);
      if (!over.length) continue;
      const ids = over.map((row) => row.id);
      for (const id of ids) refused.add(id);
      // Due at the next window's start, measured from the claim's clock.
      releases.push(this.release(ids, Math.max(0, windowEnd - at), bindNow));
    }
    await Promise.all(releases);
    return refused.size ? rows.filter((row) => !refused.has(row.id)) : rows;
  }

  /**
   * Gives rows back without an attempt counted; a release that fails leaves them to their lease
   * end (they are in no ledger: nobody renews them), logged.
   */
  private async release(ids: readonly string[], delayMs: number, now: Now): Promise<void> {
    const { connection, metrics, logger } = this;
    try {
      await metrics.retry('release', () => connection.store.completion.release(ids, delayMs, now));
    } catch (error) {
      logger.warn(
        `Could not give back ${ids.length} rate-limited message(s), due again when their claim ends: ${(error as Error).message}`,
      );
    }
  }
}
