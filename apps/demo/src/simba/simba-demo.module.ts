import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SimbaModule } from '@holdfast/simba';
import { LeaderLedger } from './leader-ledger.entity';
import { LeaderTicker } from './leader-ticker.service';
import { SimbaDemoController } from './simba-demo.controller';

/**
 * Leader election on the `demo-leader` mutex: start two instances on one database
 * (`PORT=3001 npm start` twice with the same DATABASE_URL or DEMO_SQLITE_FILE) and `GET /simba`
 * on each; kill the leader and the other takes over within ttl + transition. The leader's job
 * writes the demo's own `demo_leader_ledger` row through `fenced()`: `POST /simba/ledger` with an
 * old leader's `{"token": …}` shows that write refused.
 */
@Module({
  imports: [SimbaModule.forRoot({ ttl: '5s', transition: '3s' }), TypeOrmModule.forFeature([LeaderLedger])],
  controllers: [SimbaDemoController],
  providers: [LeaderTicker],
})
export class SimbaDemoModule {}
