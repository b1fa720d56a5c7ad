// README tour: @holdfast/simba. Type-checked with the rest of the repo (npm run typecheck).
import { Injectable, Module } from '@nestjs/common';
import { Interval, ScheduleModule } from '@nestjs/schedule';
import { InjectRepository, TypeOrmModule } from '@nestjs/typeorm';
import { Column, Entity, PrimaryColumn, type Repository } from 'typeorm';
import {
  FenceColumn,
  fenced,
  LeaderOnly,
  MutexContendRegistry,
  MutexState,
  OnMutexAcquired,
  OnMutexReleased,
  SimbaLocker,
  SimbaModule,
} from '@holdfast/simba';

@Entity()
export class Summary {
  @PrimaryColumn() id!: string;
  @Column({ type: 'int' }) total!: number;
  @FenceColumn() fence?: number | null; // the token of the last write
}

@Injectable()
export class Reports {
  constructor(
    private readonly simba: SimbaLocker,
    private readonly mutexes: MutexContendRegistry,
    @InjectRepository(Summary) private readonly summaries: Repository<Summary>,
  ) {}

  @Interval(60_000)
  @LeaderOnly('reports')
  async everyMinute(): Promise<void> {
    // runs on exactly one instance: the current owner of the 'reports' mutex
    const token = this.mutexes.get('reports')?.fencingToken;
    if (token === undefined) return;
    const total = 42; // ... slow work: this instance may be paused past its lease meanwhile
    const result = await fenced(this.summaries).update({ id: 'daily' }, { total }, token);
    if (!result.accepted) return; // a newer leader has written: this one is stale
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
    TypeOrmModule.forRoot({ type: 'postgres', url: process.env.DATABASE_URL, entities: [Summary] }),
    TypeOrmModule.forFeature([Summary]),
    ScheduleModule.forRoot(),
    SimbaModule.forRoot({ ttl: '10s', transition: '6s', schema: 'create' }),
  ],
  providers: [Reports],
})
export class SimbaExampleModule {}
