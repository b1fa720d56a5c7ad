import { Injectable } from '@nestjs/common';
import { healthResult, type HealthResult } from '@holdfast/core/kit';
import { LockerService } from '../service/locker.service';

/**
 * Terminus indicator: up while this instance is master or a standby whose lock store answers;
 * down when stopped or when the store is unreachable. Role and holder go in the details.
 */
@Injectable()
export class LockerHealthIndicator {
  constructor(private readonly locker: LockerService) {}

  /** Async like the other libs' indicators, though it reads only in-process state. */
  async isHealthy<const Key extends string = 'locker'>(
    key: Key = 'locker' as Key,
  ): Promise<HealthResult<Key>> {
    const error = this.locker.lastError;
    const data = {
      role: this.locker.role,
      lockName: this.locker.lockName,
      holder: this.locker.holder ?? null,
      lastKeepAlive: this.locker.lastKeepAlive?.toISOString() ?? null,
    };
    const running = this.locker.role === 'master' || this.locker.role === 'standby';
    if (!running || error !== undefined) {
      return healthResult(key, 'down', {
        ...data,
        error: error === undefined ? 'not running' : String(error),
      });
    }
    return healthResult(key, 'up', data);
  }
}
