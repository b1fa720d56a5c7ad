import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import { demoDatabaseOptions } from './database.config';
import { FailoverDemoModule } from './failover/failover-demo.module';
import { SimbaDemoModule } from './simba/simba-demo.module';
import { InboxDemoModule } from './inbox/inbox-demo.module';
import { LockerDemoModule } from './locker/locker-demo.module';
import { StatusController } from './status/status.controller';

@Module({
  imports: [
    TypeOrmModule.forRootAsync({ useFactory: () => demoDatabaseOptions() }),
    ScheduleModule.forRoot(),
    FailoverDemoModule,
    SimbaDemoModule,
    InboxDemoModule,
    LockerDemoModule,
  ],
  controllers: [StatusController],
})
export class AppModule {}
