import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import { demoDatabaseOptions } from './database.config';
import { FailoverDemoModule } from './failover/failover-demo.module';
import { SimbaDemoModule } from './simba/simba-demo.module';
import { InboxDemoModule } from './inbox/inbox-demo.module';
import { LockerDemoModule } from './locker/locker-demo.module';
import { HoldfastDashboardModule } from '@holdfast/dashboard';
import { DemoAdminGuard } from './dashboard/demo-admin.guard';
import { StatusController } from './status/status.controller';

@Module({
  imports: [
    TypeOrmModule.forRootAsync({ useFactory: () => demoDatabaseOptions() }),
    ScheduleModule.forRoot(),
    FailoverDemoModule,
    SimbaDemoModule,
    InboxDemoModule,
    LockerDemoModule,
    // The dashboard at /, its JSON at /api/state; the demo's guard allows the inbox actions.
    HoldfastDashboardModule.forRoot({
      path: '/',
      guard: DemoAdminGuard,
      title: 'Holdfast demo',
      pollInterval: '1s',
    }),
  ],
  controllers: [StatusController],
})
export class AppModule {}
