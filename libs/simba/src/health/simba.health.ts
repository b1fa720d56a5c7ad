import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { MutexContendRegistry } from '../mutex/mutex-contend.registry';
import { SimbaConnection } from '../mutex/simba-connection';

/**
 * @nestjs/terminus indicator: up when `simba_mutex`'s database answers the clock query within the
 * statement timeout, with which mutexes this instance contends for and which it owns.
 */
@Injectable()
export class SimbaHealthIndicator {
  private readonly health = new HealthIndicatorService();

  constructor(
    private readonly connection: SimbaConnection,
    private readonly registry: MutexContendRegistry,
  ) {}

  async isHealthy(key = 'simba'): Promise<HealthIndicatorResult> {
    const session = this.health.check(key);
    const mutexes = this.registry.all().map((s) => ({
      mutex: s.mutex,
      status: s.status,
      isOwner: s.isOwner,
      owner: s.afterOwner.ownerId,
      fencingToken: s.afterOwner.fencingToken,
    }));
    try {
      const databaseNow = await this.connection.repository.now();
      return session.up({ databaseNow, mutexes });
    } catch (error) {
      return session.down({ message: (error as Error).message, mutexes });
    }
  }
}
