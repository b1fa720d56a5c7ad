import { Controller, Get } from '@nestjs/common';
import { LockerService } from '@holdfast/locker';
import { MasterWork } from './master-work.service';

@Controller('locker')
export class LockerDemoController {
  constructor(
    private readonly locker: LockerService,
    private readonly work: MasterWork,
  ) {}

  /** master or standby, who holds the lease (read from HOLDFAST_LOCK), and this instance's id. */
  @Get()
  async status() {
    const holder = await this.locker.readHolder().catch(() => this.locker.holder);
    return {
      role: this.locker.isMaster ? 'master' : 'standby',
      holder: holder ?? null,
      lastKeepAlive: this.locker.lastKeepAlive?.toISOString() ?? null,
      lockName: this.locker.lockName,
      instanceId: this.locker.instanceId,
      state: this.locker.role,
      masterSince: this.work.masterSince?.toISOString() ?? null,
      terms: this.work.terms,
      lastLoss: this.work.lastLoss ?? null,
    };
  }
}
