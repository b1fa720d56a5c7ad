import { Inject, Injectable } from '@nestjs/common';
import { probeHealth, type HealthResult } from '@holdfast/core/kit';
import { MutexContendRegistry } from '../mutex/mutex-contend.registry';
import { SimbaConnection } from '../mutex/simba-connection';
import { SIMBA_OPTIONS } from '../simba.tokens';
import type { ResolvedSimbaOptions } from '../simba.options';

/**
 * @nestjs/terminus indicator: up when `simba_mutex`'s database answers the clock query within the
 * statement timeout, with which mutexes this instance contends for and which it owns; up with
 * `enabled: false` and no database call when the module is disabled.
 */
@Injectable()
export class SimbaHealthIndicator {
  constructor(
    private readonly connection: SimbaConnection,
    private readonly registry: MutexContendRegistry,
    @Inject(SIMBA_OPTIONS) private readonly options: ResolvedSimbaOptions,
  ) {}

  async isHealthy<const Key extends string = 'simba'>(key: Key = 'simba' as Key): Promise<HealthResult<Key>> {
    // Switched off on purpose is not a failure: up, saying so, without asking the database.
    if (!this.options.enabled) return probeHealth(key, { enabled: false }, async () => ({}));
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
