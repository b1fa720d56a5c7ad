import type { Logger } from '@nestjs/common';
import type { Now } from '../store/cor-message.rows';
import type { MessageRow } from '../store/cor-message.rows';
import type { InboxConnection } from '../store/inbox-connection';
import type { PermitRequest } from '../store/inbox-rate.statements';
import type { InboxMetrics } from '../metrics/inbox.metrics';

/** What the rate limiter needs from the claimer that owns it. */
export interface RateLimiterContext {
  connection: InboxConnection;
  metrics: InboxMetrics;
  logger: Logger;
}

/**
 * The inbox option `rateLimits` applied to a claim: for each limited type name among the claimed
 * rows, permits are taken in the window of the claim's database clock (InboxRateStatements.take);
 * the rows beyond them go back at once, due at the start of the key's next window, without an
 * attempt counted (RETRIES unchanged), and without a failure recorded. A claim without a limited
 * type costs nothing more.
 */
export class RateLimiter {
  constructor(private readonly ctx: RateLimiterContext) {}

  /**
   * The rows this node may deliver now (in the claim's order). `now` is the database clock the
   * claim read (or the test clock); `bindNow` what the release binds as its clock.
   */
  async admit(rows: MessageRow[], now: number, bindNow: Now): Promise<MessageRow[]> {
    const rates = this.ctx.connection.rates;
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
    const refused = new Set<string>();
    try {
      const grants = await this.ctx.metrics.retry('rate', () => rates.statements.take(requests, now));
      const releases: Promise<unknown>[] = [];
      for (const { key, granted, windowEnd } of grants) {
        const over = byKey.get(key)!.slice(granted);
        if (!over.length) continue;
        const ids = over.map((row) => row.id);
        for (const id of ids) refused.add(id);
        // Due at the next window's start, measured from the claim's clock.
        const delay = Math.max(0, windowEnd - now);
        releases.push(this.release(ids, delay, bindNow));
      }
      await Promise.all(releases);
    } catch (error) {
      // No permits could be taken: the limited rows go back as they are, due at once (never
      // delivered past a limit the node could not count).
      const ids = [...byKey.values()].flat().map((row) => row.id);
      this.ctx.logger.warn(`Could not take rate-limit permits: ${(error as Error).message}`);
      for (const id of ids) refused.add(id);
      await this.release(ids, 0, bindNow).catch((e: Error) =>
        this.ctx.logger.warn(`Could not give back ${ids.length} rate-limited message(s): ${e.message}`),
      );
    }
    return refused.size ? rows.filter((row) => !refused.has(row.id)) : rows;
  }

  private release(ids: readonly string[], delayMs: number, now: Now): Promise<number> {
    const { connection, metrics } = this.ctx;
    return metrics.retry('release', () => connection.store.completion.release(ids, delayMs, now));
  }
}
