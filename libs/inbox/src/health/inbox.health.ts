import { Injectable } from '@nestjs/common';
import { probeHealth, type HealthResult } from '@holdfast/core/kit';
import { InboxDelivery } from '../delivery/inbox-delivery.service';
import { MessageManagement } from '../management/message-management.service';

/**
 * Terminus health indicator: up when the inbox table answers; reports the counts per status and
 * whether this node delivers. Parked messages do not make it down (they need an admin, not a restart).
 */
@Injectable()
export class InboxHealthIndicator {
  constructor(
    private readonly management: MessageManagement,
    private readonly delivery: InboxDelivery,
  ) {}

  async isHealthy<const Key extends string = 'inbox'>(key: Key = 'inbox' as Key): Promise<HealthResult<Key>> {
    return probeHealth(key, { delivering: this.delivery.isDelivering() }, async () => ({
      ...(await this.management.count()),
    }));
  }
}
