import { BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import { FAILOVER_RESOLVED_OPTIONS } from '../failover.constants';
import { FailoverMetrics } from '../health/failover.metrics';
import type { ResolvedFailoverModuleOptions } from '../options/failover-module.options';

/**
 * Runs store writes and deletes. With `async` (default) the caller does not wait for them; a
 * failure is logged and counted, never thrown to the caller; shutdown waits for what is in
 * flight so a graceful stop loses nothing.
 */
@Injectable()
export class FailoverWriter implements BeforeApplicationShutdown {
  private readonly logger = new Logger(FailoverWriter.name);
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    @Inject(FAILOVER_RESOLVED_OPTIONS) private readonly options: ResolvedFailoverModuleOptions,
    private readonly metrics: FailoverMetrics,
  ) {}

  submit(operation: string, failover: string, work: () => Promise<unknown>): Promise<void> | undefined {
    if (this.options.async && this.inFlight.size >= this.options.maxPendingWrites) {
      this.metrics.dropped();
      if (this.metrics.droppedWrites % 1000 === 1) {
        this.logger.warn(
          `Dropping async failover writes: ${this.inFlight.size} already in flight (${this.metrics.droppedWrites} dropped so far)`,
        );
      }
      return undefined;
    }
    const run = work().then(
      () => undefined,
      (error: unknown) => {
        this.metrics.storeError(operation);
        this.logger.warn(
          `Failover '${failover}': ${operation} failed: ${(error as Error)?.message ?? error}`,
        );
      },
    );
    if (!this.options.async) return run;
    this.inFlight.add(run);
    void run.finally(() => this.inFlight.delete(run));
    return undefined;
  }

  get pending(): number {
    return this.inFlight.size;
  }

  /** Resolves when every write submitted so far has finished. */
  async flush(): Promise<void> {
    while (this.inFlight.size) await Promise.all([...this.inFlight]);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.flush();
  }
}
