import { Logger } from '@nestjs/common';
import type { ModuleRef } from '@nestjs/core';
import {
  AbstractMutexContender,
  MutexContendServiceFactory,
  type MutexContendService,
  type MutexState,
} from '@holdfast/simba';
import { InboxClusterModeError } from '../errors';
import type { InboxLeadership } from './inbox-leadership';

class InboxContender extends AbstractMutexContender {
  private readonly logger = new Logger('InboxLeadership');

  override onAcquired(_state: MutexState): void {
    this.logger.log(`This node now delivers the inbox (owner of mutex '${this.mutex}')`);
  }

  override onReleased(_state: MutexState): void {
    this.logger.log(`This node stopped delivering the inbox (lost mutex '${this.mutex}')`);
  }
}

/**
 * Leader mode: only the owner of a Simba mutex delivers, so messages are delivered by one node
 * at a time (strict group order across nodes). Needs SimbaModule in the application.
 */
export class SimbaLeadership implements InboxLeadership {
  readonly mode = 'leader' as const;
  private service?: MutexContendService;

  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly mutex: string,
  ) {}

  isLeader(): boolean {
    return this.service?.isOwner ?? false;
  }

  start(): void {
    let factory: MutexContendServiceFactory;
    try {
      factory = this.moduleRef.get(MutexContendServiceFactory, { strict: false });
    } catch {
      throw new InboxClusterModeError(
        'leader',
        'it needs @holdfast/simba: import SimbaModule.forRoot({ ... }) in the application (on SQLite leader is the only mode).',
      );
    }
    this.service = factory.createMutexContendService(new InboxContender(this.mutex));
    this.service.start();
  }

  async stop(): Promise<void> {
    const service = this.service;
    this.service = undefined;
    if (service) await service.stop();
  }
}
