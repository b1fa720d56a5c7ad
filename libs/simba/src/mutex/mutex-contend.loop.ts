import { Logger } from '@nestjs/common';
import { monotonicMillis, HoldfastTimers, OutageLog } from '@holdfast/core/kit';
import { MutexStatementTimeoutError } from '../errors';
import { MutexOwner } from './mutex-owner';
import type { AcquireResult, BatchRequest, BatchSource } from './mutex-batch';

export type Attempt = 'acquire' | 'peek';

const renewal = (r: LoopRequest) => r.attempt === 'acquire' && r.renew;

/** Why an instance may not keep its leases; each cause is its own episode of warnings. */
type RiskCause = 'event-loop' | 'pool' | 'database';

/** What a contend service asks the loop for; the loop answers through the callbacks. */
export interface LoopRequest {
  readonly mutex: string;
  readonly contenderId: string;
  /** Monotonic time from which the attempt may run. */
  dueAt: number;
  attempt: Attempt;
  ttl: number;
  transition: number;
  standbyPoll: number;
  statementTimeout: number;
  /** True when the service believes it owns (or the row says it does): a renewal. */
  renew: boolean;
  /** Set by the loop when it takes the request into a tick. */
  picked: boolean;
  onPicked(): void;
  onAcquire(result: AcquireResult, sentAt: number): void;
  onPeek(owner: MutexOwner): void;
  onFailure(error: unknown, attempt: Attempt): void;
}

/**
 * One loop per module instance (per MutexRepository) that runs the attempts of all its contend
 * services together: every tick is one transaction with one UPDATE for everything due (renewals
 * of what the instance owns and acquisitions of what it saw free) and one SELECT of every row it
 * contends for. So the database sees a few statements per tick, whether the instance contends
 * for one mutex or thousands, and renewals stay aligned (renewed together, due together).
 *
 * It also watches whether the instance can keep its leases at all, and says once (a warning with
 * the reason) when it cannot: the event loop blocked, a pooled connection long to come, or a slow
 * database answer.
 */
export class MutexContendLoop {
  private readonly logger = new Logger(MutexContendLoop.name);
  private readonly pending = new Map<LoopRequest, true>();
  private timerDueAt = Infinity;
  /** Registered as `holdfast:simba:tick:<table>` (and the lost-mutex report beside it). */
  private readonly tickName: string;
  private readonly lostName: string;
  private running = false;
  private readonly outage: OutageLog;
  /** The lease-risk episodes under way, per cause: when each ends if its cause is not seen again. */
  private readonly riskUntil = new Map<RiskCause, number>();
  private readonly lost: string[] = [];
  /** Ticks run (for tests and the benchmark). */
  ticks = 0;

  constructor(
    private readonly repository: BatchSource,
    holdDownMs = 5_000,
    /** The module's timers, in the application's SchedulerRegistry when it has ScheduleModule. */
    readonly timers: HoldfastTimers = new HoldfastTimers(),
  ) {
    this.tickName = `holdfast:simba:tick:${repository.queries.table}`;
    this.lostName = `holdfast:simba:lost-report:${repository.queries.table}`;
    this.outage = new OutageLog(this.logger, `simba_mutex (${repository.queries.table})`, { holdDownMs });
  }

  /** Queues (or re-queues) `request` to run at `request.dueAt`. */
  submit(request: LoopRequest): void {
    this.pending.set(request, true);
    this.arm();
  }

  cancel(request: LoopRequest): void {
    this.pending.delete(request);
  }

  /**
   * A service stepped down at its local deadline: collected for a moment so that a thousand
   * mutexes lost in one outage make one warning, not a thousand.
   */
  reportLost(mutex: string, token: number): void {
    this.lost.push(`'${mutex}' (fencing token ${token})`);
    if (this.timers.has(this.lostName)) return;
    this.timers.set(this.lostName, 50, () => {
      const lost = this.lost.splice(0);
      const shown = lost.slice(0, 5).join(', ') + (lost.length > 5 ? `, and ${lost.length - 5} more` : '');
      // Within an outage already warned about, stepping down is its expected consequence.
      const level = this.outage.ongoing ? 'log' : 'warn';
      this.logger[level](
        lost.length === 1
          ? `Mutex ${shown}: renewal not confirmed before the local deadline; no longer owner.`
          : `${lost.length} mutexes no longer owned (renewal not confirmed before the local deadline): ${shown}.`,
      );
    });
  }

  private arm(): void {
    if (this.running || this.pending.size === 0) return;
    let next = Infinity;
    for (const r of this.pending.keys()) next = Math.min(next, r.dueAt);
    if (this.timers.has(this.tickName) && next >= this.timerDueAt) return;
    this.timerDueAt = next;
    const armedAt = monotonicMillis();
    this.timers.set(this.tickName, next - armedAt, () => this.tick(next, armedAt));
  }

  private tick(plannedAt: number, armedAt: number): void {
    this.timerDueAt = Infinity;
    const now = monotonicMillis();
    // Everything due within a small window runs now: renewing or looking a little early costs
    // nothing and keeps the services of this instance in step.
    const due = [...this.pending.keys()].filter((r) => r.dueAt <= now + this.window(r));
    if (due.length === 0) return this.arm();
    // A tick that renews takes the renewals due within a quarter ttl with it: the owned rows of an
    // instance, each acquired at its own time, come to renew in one round instead of one round
    // each (a spread group's mutexes, #43). Renewing early only moves the lease on from now.
    // Likewise a standby's look at its row, up to one standbyPoll early: the looks of contenders
    // that got out of step (a spread group's, after a give-up or a lost race) fall in step again,
    // one round per poll instead of one per phase.
    const renews = due.some(renewal);
    for (const r of this.pending.keys()) {
      if (due.includes(r)) continue;
      const early = renewal(r) ? (renews ? r.ttl / 4 : -1) : r.attempt === 'peek' ? r.standbyPoll : -1;
      if (r.dueAt <= now + early) due.push(r);
    }
    for (const r of due) {
      this.pending.delete(r);
      r.picked = true;
      r.onPicked();
    }
    this.watchLag(now - Math.max(plannedAt, armedAt), due);
    this.running = true;
    this.ticks++;
    void this.runBatch(due).finally(() => {
      this.running = false;
      this.arm();
    });
  }

  private window(r: LoopRequest): number {
    return Math.min(250, r.standbyPoll / 2, r.transition / 4);
  }

  private async runBatch(due: LoopRequest[]): Promise<void> {
    const sentAt = monotonicMillis();
    const requests: BatchRequest[] = due.map((r) => ({
      mutex: r.mutex,
      contenderId: r.contenderId,
      attempt: r.attempt,
      renew: r.renew,
      ttl: r.ttl,
      transition: r.transition,
    }));
    const timeout = Math.min(...due.map((r) => r.statementTimeout));
    let rows: Map<string, MutexOwner>;
    let timing: { connectMs: number; totalMs: number };
    try {
      ({ rows, timing } = await this.repository.batch(requests, timeout));
    } catch (error) {
      if (error instanceof MutexStatementTimeoutError && error.waitingFor === 'connection') {
        // No connection to send on: Simba's own pool is busy, or the server is slow to accept a
        // new connection (a failover in progress). One warning for that, not an outage.
        this.warnOnce(
          'pool',
          true,
          `no pooled connection came within ${error.timeoutMs} ms (the server slow to accept a connection, or the pool busy)`,
          timeout,
        );
      } else {
        this.outage.failed(error, {
          during: `${due.length} mutex attempt(s)`,
          consequence: 'owners step down at their local deadline',
          write: due.some((r) => r.attempt === 'acquire'),
        });
      }
      for (const r of due) r.onFailure(error, r.attempt);
      return;
    }
    this.outage.succeeded(due.some((r) => r.attempt === 'acquire'));
    this.watchDatabase(timing, due);
    for (const r of due) {
      const owner = rows.get(r.mutex) ?? MutexOwner.NONE;
      if (r.attempt === 'peek') r.onPeek(owner);
      else
        r.onAcquire(
          { acquired: owner.ownerId === r.contenderId && owner.transitionAt > owner.databaseNow, owner },
          sentAt,
        );
    }
  }

  /** The timer fired late: the event loop was blocked (CPU, a synchronous call, a GC pause). */
  private watchLag(lateMs: number, due: LoopRequest[]): void {
    const bound = Math.min(...due.map((r) => r.transition)) / 4;
    this.warnOnce(
      'event-loop',
      lateMs > bound,
      `the event loop was blocked for ${Math.round(lateMs)} ms`,
      bound,
    );
  }

  private watchDatabase(timing: { connectMs: number; totalMs: number }, due: LoopRequest[]): void {
    const bound = Math.min(...due.map((r) => r.transition)) / 4;
    if (timing.connectMs > bound) {
      this.warnOnce(
        'pool',
        true,
        `a pooled connection took ${Math.round(timing.connectMs)} ms to come (the server slow to accept a connection, or the pool busy)`,
        bound,
      );
    } else {
      this.warnOnce(
        'database',
        timing.totalMs > bound,
        `the database took ${Math.round(timing.totalMs)} ms to answer`,
        bound,
      );
    }
  }

  /**
   * One warning per episode of each cause; an episode ends after 10 s without its cause. Causes
   * are separate episodes: a slow database earlier does not hide a blocked event loop now.
   */
  private warnOnce(cause: RiskCause, condition: boolean, reason: string, boundMs: number): void {
    const now = monotonicMillis();
    const until = this.riskUntil.get(cause);
    if (!condition) {
      if (until !== undefined && now > until) this.riskUntil.delete(cause);
      return;
    }
    this.riskUntil.set(cause, now + 10_000);
    if (until !== undefined) return;
    this.logger.warn(
      `Simba may not keep its leases on ${this.repository.queries.table}: ${reason} (the bound is ${Math.round(boundMs)} ms). ` +
        `Owners that cannot renew step down at their local deadline; standbys acquire late. Said once until it stops for 10 s.`,
    );
  }
}
