// README tour: @holdfast/locker. Type-checked with the rest of the repo (npm run typecheck).
import { Injectable, Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LockerModule, LockerService, OnLockAcquired, OnLockLost } from '@holdfast/locker';

@Injectable()
export class Consumer {
  constructor(private readonly locker: LockerService) {}

  @OnLockAcquired()
  start(): void {
    // this instance is master now: start consuming
  }

  @OnLockLost()
  stop(): void {
    // demoted (lock lost or shutting down): stop at once; the instance waits as standby again
  }

  status() {
    return { master: this.locker.isMaster, holder: this.locker.holder };
  }
}

@Module({
  imports: [
    TypeOrmModule.forRoot({ type: 'postgres', url: process.env.DATABASE_URL }),
    ScheduleModule.forRoot(),
    LockerModule.forRoot({
      locker: { type: 'lease-database' },
      lockKeepAlivePeriod: '2s',
      lockAcquireSleepInterval: '5s',
      startup: 'background',
      schema: 'create',
    }),
  ],
  providers: [Consumer],
})
export class LockerExampleModule {}
