import { Inject, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { findSchedulerRegistry, HoldfastTimers, keepProcessAlive } from '@holdfast/core/kit';
import { INBOX_OPTIONS } from '../inbox.tokens';
import type { ResolvedInboxOptions } from '../options/resolved-inbox-options';
import { InboxConnection } from '../store/inbox-connection';

/** The delivery's timers, by what they run. */
export type TimerKind = 'poll' | 'cleanup' | 'heartbeat' | 'flush' | 'deletes';

/** The context of the delivery's log lines (every part of it logs as the service). */
export const DELIVERY_LOG_CONTEXT = 'InboxDelivery';

/**
 * What the parts of one inbox's delivery share while it runs: whether this node delivers at all
 * (`deliver`), whether it runs now (from bootstrap until the drain starts), its timers (in the
 * app's SchedulerRegistry once started), and the hold on the process while it runs.
 */
@Injectable()
export class DeliveryState {
  /** `holdfast:inbox:{poll,cleanup,heartbeat,flush,deletes}:<table>`, in the app's SchedulerRegistry once started. */
  private current = new HoldfastTimers();
  private runs = false;
  /** Lets the process end again: the delivery loop holds it while it runs (see keepProcessAlive). */
  private releaseProcess?: () => void;

  constructor(
    private readonly connection: InboxConnection,
    @Inject(INBOX_OPTIONS) private readonly options: ResolvedInboxOptions,
    private readonly moduleRef: ModuleRef,
  ) {}

  /** The option `deliver`: this node runs the delivery loop. */
  get deliver(): boolean {
    return this.options.deliver;
  }

  /** True from start until the drain begins: new claims, runs and ticks are armed only then. */
  get running(): boolean {
    return this.runs;
  }

  get timers(): HoldfastTimers {
    return this.current;
  }

  /** `holdfast:inbox:<what>:<table>`, this node's timers in the SchedulerRegistry. */
  timerName(what: TimerKind): string {
    return `holdfast:inbox:${what}:${this.connection.store.table}`;
  }

  /** The loop starts: its timers go to the app's SchedulerRegistry, and it holds the process. */
  start(): void {
    this.current = new HoldfastTimers(findSchedulerRegistry(this.moduleRef));
    this.runs = true;
    this.releaseProcess = keepProcessAlive(`inbox delivery (${this.connection.store.table})`);
  }

  /** The drain begins: nothing new is armed or started from now on. */
  stop(): void {
    this.runs = false;
  }

  /** After the drain, whatever it met: nothing of the inbox holds the process any more. */
  release(): void {
    this.releaseProcess?.();
    this.releaseProcess = undefined;
  }
}
