// README tour: @holdfast/simba. Type-checked with the rest of the repo (npm run typecheck).
import { Injectable, Module } from '@nestjs/common';
import { Interval, ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  LeaderOnly,
  MutexState,
  OnMutexAcquired,
  OnMutexReleased,
  SimbaLocker,
  SimbaModule,
} from '@holdfast/simba';

@Injectable()
export class Reports {
  constructor(private readonly simba: SimbaLocker) {}

  @Interval(60_000)
  @LeaderOnly('reports')
  everyMinute(): void {
    // runs on exactly one instance: the current owner of the 'reports' mutex
  }

  @OnMutexAcquired('reports')
  promoted(state: MutexState): void {
    console.log('now the leader, fencing token', state.fencingToken);
  }

  @OnMutexReleased('reports')
  demoted(): void {
    console.log('no longer the leader');
  }

  nightly(): Promise<void> {
    return this.simba.withLock(
      'nightly-export',
      async (signal) => {
        if (signal.aborted) return; // ownership was lost while working
      },
      { timeout: '30s' },
    );
  }
}

@Module({
  imports: [
    TypeOrmModule.forRoot({ type: 'postgres', url: process.env.DATABASE_URL }),
    ScheduleModule.forRoot(),
    SimbaModule.forRoot({ ttl: '10s', transition: '6s', schema: 'create' }),
  ],
  providers: [Reports],
})
export class SimbaExampleModule {}
