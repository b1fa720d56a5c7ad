import { Logger } from '@nestjs/common';
import type { ModuleRef } from '@nestjs/core';
import type { MutexContendService, MutexState } from '@holdfast/simba';
import { InboxClusterModeError } from '../errors';
import type { InboxLeadership } from './inbox-leadership';

type Simba = typeof import('@holdfast/simba');

/** `@holdfast/simba` is an optional peer, needed in leader mode only: loaded when that mode starts. */
function loadSimba(): Simba | undefined {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('@holdfast/simba') as Simba;
  } catch {
    return undefined;
  }
}

function inboxContender(simba: Simba, mutex: string) {
  const logger = new Logger(SimbaLeadership.name);
  return new (class InboxContender extends simba.AbstractMutexContender {
    override onAcquired(_state: MutexState): void {
      logger.log(`This node now delivers the inbox (owner of mutex '${this.mutex}')`);
    }

    override onReleased(_state: MutexState): void {
      logger.log(`This node stopped delivering the inbox (lost mutex '${this.mutex}')`);
    }
  })(mutex);
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
    const simba = loadSimba();
    let factory: InstanceType<Simba['MutexContendServiceFactory']> | undefined;
    try {
      factory = simba && this.moduleRef.get(simba.MutexContendServiceFactory, { strict: false });
    } catch {
      factory = undefined; // SimbaModule is not imported
    }
    if (!simba || !factory)
      throw new InboxClusterModeError(
        'leader',
        'it needs @holdfast/simba: import SimbaModule.forRoot({ ... }) in the application (on SQLite leader is the only mode).',
      );
    this.service = factory.createMutexContendService(inboxContender(simba, this.mutex));
    this.service.start();
  }

  async stop(): Promise<void> {
    const service = this.service;
    this.service = undefined;
    if (service) await service.stop();
  }
}
