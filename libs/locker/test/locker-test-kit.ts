import { Injectable, type DynamicModule, type Provider } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  LockerModule,
  LockerService,
  OnLockAcquired,
  OnLockLost,
  type LockAcquiredEvent,
  type LockLostEvent,
  type LockerModuleOptions,
} from '@holdfast/locker';

export type RecordedEvent = ({ type: 'acquired' } & LockAcquiredEvent) | ({ type: 'lost' } & LockLostEvent);

export interface TestInstance {
  moduleRef: TestingModule;
  locker: LockerService;
  events: RecordedEvent[];
  /** Runs the lifecycle hooks (bootstrap); with startup 'block' it resolves once master. */
  init(): Promise<unknown>;
  close(): Promise<void>;
}

/** One application instance in this process, recording its @OnLockAcquired / @OnLockLost calls. */
export async function lockerInstance(
  options: LockerModuleOptions,
  providers: Provider[] = [],
  imports: DynamicModule[] = [],
): Promise<TestInstance> {
  const events: RecordedEvent[] = [];

  @Injectable()
  class Recorder {
    @OnLockAcquired()
    onAcquired(event: LockAcquiredEvent): void {
      events.push({ type: 'acquired', ...event });
    }

    @OnLockLost()
    onLost(event: LockLostEvent): void {
      events.push({ type: 'lost', ...event });
    }
  }

  const moduleRef = await Test.createTestingModule({
    imports: [...imports, LockerModule.forRoot(options)],
    providers: [Recorder, ...providers],
  }).compile();
  let closed = false;
  let initFailed = false;
  return {
    moduleRef,
    locker: moduleRef.get(LockerService),
    events,
    init: () =>
      moduleRef.init().catch((error: unknown) => {
        initFailed = true;
        throw error;
      }),
    close: async () => {
      if (closed) return;
      closed = true;
      // Nest's close() rethrows a failed init (it awaits the init promise first).
      if (initFailed) await moduleRef.close().catch(() => undefined);
      else await moduleRef.close();
    },
  };
}

/** Polls until `predicate` holds (rejects after `timeoutMs`). */
export async function waitUntil(
  predicate: () => boolean,
  timeoutMs = 20_000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
