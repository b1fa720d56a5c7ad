import { Controller, Get } from '@nestjs/common';
import { MutexContendRegistry } from '@holdfast/simba';
import { DEMO_LEADER_MUTEX, LeaderTicker } from './leader-ticker.service';

@Controller('simba')
export class SimbaDemoController {
  constructor(
    private readonly registry: MutexContendRegistry,
    private readonly ticker: LeaderTicker,
  ) {}

  /** Who leads `demo-leader` (as last read from simba_mutex) and what this instance did. */
  @Get()
  status() {
    const service = this.registry.get(DEMO_LEADER_MUTEX);
    const owner = service?.afterOwner;
    return {
      mutex: DEMO_LEADER_MUTEX,
      owner: owner?.hasOwner() ? owner.ownerId : null,
      isOwner: service?.isOwner ?? false,
      fencingToken: owner?.hasOwner() ? owner.fencingToken : null,
      instanceId: service?.contenderId ?? null,
      ticks: this.ticker.ticks,
      lastTickAt: this.ticker.lastTickAt ?? null,
    };
  }
}
