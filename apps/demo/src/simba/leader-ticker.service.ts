import { Injectable, Logger } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { LeaderOnly, OnMutexAcquired, OnMutexReleased, type MutexState } from '@holdfast/simba';

export const DEMO_LEADER_MUTEX = 'demo-leader';

/** A job that should run on one instance only: it ticks every 2 s on the current leader. */
@Injectable()
export class LeaderTicker {
  private readonly logger = new Logger(LeaderTicker.name);
  ticks = 0;
  lastTickAt?: string;

  @Interval(2_000)
  @LeaderOnly(DEMO_LEADER_MUTEX)
  tick(): void {
    this.ticks++;
    this.lastTickAt = new Date().toISOString();
  }

  @OnMutexAcquired(DEMO_LEADER_MUTEX)
  elected(state: MutexState): void {
    this.logger.log(
      `This instance is now the leader of '${DEMO_LEADER_MUTEX}' (fencing token ${state.fencingToken})`,
    );
  }

  @OnMutexReleased(DEMO_LEADER_MUTEX)
  demoted(): void {
    this.logger.log(`This instance is no longer the leader of '${DEMO_LEADER_MUTEX}'`);
  }
}
