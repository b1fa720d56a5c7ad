import { Injectable } from '@nestjs/common';
import { assertMutexName } from './mutex-contender';
import type { MutexContendService } from './mutex-contend.service';

/**
 * The contend services SimbaModule runs for `@OnMutexAcquired`/`@OnMutexReleased`/`@LeaderOnly`
 * (one per mutex per application instance): the runtime API to ask who leads.
 */
@Injectable()
export class MutexContendRegistry {
  private readonly services = new Map<string, MutexContendService>();

  add(service: MutexContendService): void {
    this.services.set(service.mutex, service);
  }

  get(mutex: string): MutexContendService | undefined {
    assertMutexName(mutex);
    return this.services.get(mutex);
  }

  /** True when this instance currently owns `mutex` (false for a mutex nobody here contends for). */
  isOwner(mutex: string): boolean {
    return this.get(mutex)?.isOwner ?? false;
  }

  mutexes(): string[] {
    return [...this.services.keys()];
  }

  all(): MutexContendService[] {
    return [...this.services.values()];
  }
}
