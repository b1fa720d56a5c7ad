import { Injectable, Optional } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { LockerService } from '../service/locker.service';

/**
 * Terminus indicator: up while this instance is master or a standby whose lock store answers;
 * down when stopped or when the store is unreachable. Role and holder go in the details.
 */
@Injectable()
export class LockerHealthIndicator {
  private readonly health: HealthIndicatorService;

  constructor(
    private readonly locker: LockerService,
    @Optional() health?: HealthIndicatorService,
  ) {
    this.health = health ?? new HealthIndicatorService();
  }

  isHealthy(key = 'locker'): HealthIndicatorResult {
    const session = this.health.check(key);
    const error = this.locker.lastError;
    const data = {
      role: this.locker.role,
      lockName: this.locker.lockName,
      holder: this.locker.holder ?? null,
      lastKeepAlive: this.locker.lastKeepAlive?.toISOString() ?? null,
    };
    const running = this.locker.role === 'master' || this.locker.role === 'standby';
    if (!running || error !== undefined) {
      return session.down({ ...data, error: error === undefined ? 'not running' : String(error) });
    }
    return session.up(data);
  }
}
