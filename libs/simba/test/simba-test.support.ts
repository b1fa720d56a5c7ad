import type { INestApplicationContext, Provider, Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { monotonicMillis } from '@holdfast/core';
import { type TestDatabaseContext } from '@holdfast/core/testing';
import { defaultContenderId, SimbaModule, type MutexState, type SimbaModuleOptions } from '../src';

/** A Nest application context with SimbaModule on the test database (table created). */
export async function createSimbaApp(
  ctx: TestDatabaseContext,
  options: SimbaModuleOptions = {},
  providers: Provider[] = [],
  imports: Type[] = [],
): Promise<INestApplicationContext> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      SimbaModule.forRoot({
        dataSource: ctx.dataSource,
        tablePrefix: ctx.prefix,
        schema: 'create',
        ...options,
      }),
      ...imports,
    ],
    providers,
  }).compile();
  await moduleRef.init();
  return moduleRef;
}

/** Polls `predicate` every 20 ms until it is true or `timeoutMs` passes (then throws `what`). */
export async function waitUntil(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = monotonicMillis() + timeoutMs;
  while (!predicate()) {
    if (monotonicMillis() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const sleepMs = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Records every callback of a contender, in order. */
export class RecordingContender {
  readonly events: { kind: 'acquired' | 'released'; state: MutexState }[] = [];
  constructor(
    readonly mutex: string,
    readonly contenderId: string = defaultContenderId(),
  ) {}
  onAcquired(state: MutexState): void {
    this.events.push({ kind: 'acquired', state });
  }
  onReleased(state: MutexState): void {
    this.events.push({ kind: 'released', state });
  }
  count(kind: 'acquired' | 'released'): number {
    return this.events.filter((e) => e.kind === kind).length;
  }
  tokens(): number[] {
    return this.events.filter((e) => e.kind === 'acquired').map((e) => e.state.fencingToken);
  }
}

let counter = 0;
/** A mutex name unique within the test run. */
export function freshMutex(tag = 'm'): string {
  return `${tag}-${process.pid}-${++counter}-${Math.random().toString(36).slice(2, 8)}`;
}
