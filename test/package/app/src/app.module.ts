// A user's Nest application using each Holdfast module once, compiled from the packed tarballs
// (test/package/run.sh). Tables come from `holdfast migrate`; each module checks them at startup.
import { Injectable, Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import { HoldfastDashboardModule } from '@holdfast/dashboard';
import { Failover, FailoverModule, Referential } from '@holdfast/failover';
import { InboxHandler, InboxModule, type InboxMessage } from '@holdfast/inbox';
import { LockerModule, OnLockAcquired } from '@holdfast/locker';
import { OnMutexAcquired, SimbaModule, type MutexState } from '@holdfast/simba';

export class Country extends Referential {
  code!: string;
  name!: string;
}

/** Answers from a simulated upstream that the test can take down. */
@Injectable()
export class CountryService {
  upstreamDown = false;

  @Failover({ name: 'country-by-code', type: Country, expiry: '1h' })
  async findByCode(code: string): Promise<Country> {
    if (this.upstreamDown) throw new Error('upstream unavailable');
    return Object.assign(new Country(), { code, name: `country ${code}` });
  }
}

/** What the modules did, for main.ts to wait on. */
@Injectable()
export class Events {
  leaderToken?: string;
  master = false;
  delivered: string[] = [];

  @OnMutexAcquired('package-test')
  led(state: MutexState): void {
    this.leaderToken = String(state.fencingToken);
  }

  @OnLockAcquired()
  promoted(): void {
    this.master = true;
  }

  @InboxHandler({ namespace: 'package-test', name: 'ping' })
  async deliver(message: InboxMessage<{ n: number }>): Promise<void> {
    this.delivered.push(`${message.id}:${message.payload.n}`);
  }
}

@Module({
  imports: [
    TypeOrmModule.forRoot({
      type: 'better-sqlite3',
      database: process.env.APP_SQLITE_FILE ?? 'app.sqlite',
      enableWAL: true,
    }),
    ScheduleModule.forRoot(),
    FailoverModule.forRoot({ store: { type: 'sql' } }),
    SimbaModule.forRoot({ ttl: '10s', transition: '6s' }),
    LockerModule.forRoot({ locker: { type: 'lease-database' }, startup: 'background' }),
    InboxModule.forRoot({ pollInterval: '200ms' }),
    HoldfastDashboardModule.forRoot({ path: '/holdfast' }),
  ],
  providers: [CountryService, Events],
})
export class AppModule {}
