import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { InboxDelivery } from '../delivery/inbox-delivery.service';
import { MessageManagement } from '../management/message-management.service';

/**
 * Terminus health indicator: up when the inbox table answers; reports the counts per status and
 * whether this node delivers. Parked messages do not make it down (they need an admin, not a restart).
 */
@Injectable()
export class InboxHealthIndicator {
  constructor(
    private readonly health: HealthIndicatorService,
    private readonly management: MessageManagement,
    private readonly delivery: InboxDelivery,
  ) {}

  async isHealthy<const Key extends string = 'inbox'>(
    key: Key = 'inbox' as Key,
  ): Promise<HealthIndicatorResult<Key>> {
    const session = this.health.check(key);
    try {
      const counts = await this.management.count();
      return session.up({ delivering: this.delivery.isDelivering(), ...counts });
    } catch (error) {
      return session.down({ message: (error as Error).message });
    }
  }
}
