import type { FailoverMetadata } from '../decorators/failover-options';
import { failoverKey } from '../key/failover-key';
import type { FailoverKeyContext, KeyGenerator } from '../key/key-generator';

/** Most stored keys remembered per failover before the memo starts again. */
const MAX_REMEMBERED = 1_000;

/**
 * A failover's keys: its key generator with the context it is called with (layer 1, the raw
 * key of a call), and the stored key (a UUID) of a raw key, remembered so a hot key does not pay
 * an MD5 per call (bounded; the one thing in a runtime that changes).
 */
export class RuntimeKeys {
  private readonly context: FailoverKeyContext;
  private readonly stored = new Map<string, string>();

  constructor(
    private readonly generator: KeyGenerator,
    meta: FailoverMetadata,
  ) {
    this.context = {
      name: meta.name,
      domain: meta.domain,
      effectiveName: meta.effectiveName,
      method: meta.method,
    };
  }

  /** Layer 1: the raw key of a call's arguments (a key error names the failover). */
  raw(args: readonly unknown[]): string {
    return this.generator.key(args, this.context);
  }

  /** The stored key of a raw key. */
  storedKey(rawKey: string): string {
    let key = this.stored.get(rawKey);
    if (key === undefined) {
      key = failoverKey(this.context.effectiveName, rawKey);
      if (this.stored.size >= MAX_REMEMBERED) this.stored.clear();
      this.stored.set(rawKey, key);
    }
    return key;
  }
}
