import { Module } from '@nestjs/common';
import { SimbaModule } from '@holdfast/simba';
import { LeaderTicker } from './leader-ticker.service';
import { SimbaDemoController } from './simba-demo.controller';

/**
 * Leader election on the `demo-leader` mutex: start two instances on one database
 * (`PORT=3001 npm start` twice with the same DATABASE_URL or DEMO_SQLITE_FILE) and `GET /simba`
 * on each; kill the leader and the other takes over within ttl + transition.
 */
@Module({
  imports: [SimbaModule.forRoot({ ttl: '5s', transition: '3s' })],
  controllers: [SimbaDemoController],
  providers: [LeaderTicker],
})
export class SimbaDemoModule {}
