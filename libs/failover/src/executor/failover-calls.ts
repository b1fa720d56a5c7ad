import { Injectable } from '@nestjs/common';
import type { FailoverStore } from '../store/failover-store';
import { FailoverStores } from '../tenant/failover-stores';
import { FailoverBypass } from './failover-bypass';
import type { FailoverCall, FailoverInvocation } from './failover-call';
import { FailoverRuntimes } from './failover-runtimes';

/**
 * What a call of a @Failover method needs before it runs: the store of the call (the tenant's),
 * the failover's runtime and the call's raw key. When Holdfast's part cannot give them (the
 * tenant's store could not be built, the arguments make no key) the call is the upstream's
 * alone: reported through the {@link FailoverBypass}.
 */
@Injectable()
export class FailoverCalls {
  constructor(
    private readonly stores: FailoverStores,
    private readonly runtimes: FailoverRuntimes,
    private readonly bypass: FailoverBypass,
  ) {}

  /**
   * The call with its store, runtime and raw key, or undefined when it is the upstream's alone. A
   * promise only when the tenant's store is seen for the first time (built before anything
   * else). A tenant refused (no tenant, or an unknown one with `strict`) throws: that is the
   * policy the application chose, not a failure of the store.
   */
  resolve(invocation: FailoverInvocation): FailoverCall | undefined | Promise<FailoverCall | undefined> {
    const forCall = this.stores.forCall();
    if (forCall instanceof Promise)
      return forCall.then(
        (built) => this.withStore(invocation, built),
        (storeError: unknown) => {
          // The tenant's store could not be built (its table missing, the database down): the
          // call is the upstream's alone; the next call tries to build it again.
          this.bypass.report(invocation.meta.name, 'store', storeError);
          return undefined;
        },
      );
    return this.withStore(invocation, forCall);
  }

  private withStore(invocation: FailoverInvocation, store: FailoverStore): FailoverCall | undefined {
    const { meta, upstream, trace } = invocation;
    const runtime = this.runtimes.get(meta);
    let rawKey: string;
    try {
      rawKey = this.runtimes.rawKey(runtime, upstream.args);
    } catch (keyError) {
      // No key: nothing can be stored or recovered, but the plain method would still have
      // answered, so the call is the upstream's alone (SPEC §3 as amended by issue #34 §4).
      this.bypass.report(meta.name, 'key', keyError);
      return undefined;
    }
    return { meta, upstream, trace, runtime, store, rawKey };
  }
}
