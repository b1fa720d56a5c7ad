import { Injectable } from '@nestjs/common';
import { probeHealth, type HealthResult } from '@holdfast/core/kit';
import { MutexContendRegistry } from '../mutex/mutex-contend.registry';
import { SimbaConnection } from '../mutex/simba-connection';

/**
 * @nestjs/terminus indicator: up when `simba_mutex`'s database answers the clock query within the
 * statement timeout, with which mutexes this instance contends for and which it owns.
 */
@Injectable()
export class SimbaHealthIndicator {
  constructor(
    private readonly connection: SimbaConnection,
    private readonly registry: MutexContendRegistry,
  ) {}

  async isHealthy<const Key extends string = 'simba'>(key: Key = 'simba' as Key): Promise<HealthResult<Key>> {
    const mutexes = this.registry.all().map((s) => ({
      mutex: s.mutex,
      status: s.status,
      isOwner: s.isOwner,
      owner: s.afterOwner.ownerId,
      fencingToken: s.afterOwner.fencingToken,
    }));
    return probeHealth(key, { mutexes }, async () => ({
      databaseNow: await this.connection.repository.now(),
    }));
  }
}
