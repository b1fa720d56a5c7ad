/** What a key generator knows about the failover it keys: given to every `key()` call. */
export interface FailoverKeyContext {
  /** The failover's name (`@Failover({ name })`). */
  name: string;
  /** Its domain, when it shares entries with other failovers. */
  domain?: string;
  /** The name entries are stored under: `domain ?? name`. */
  effectiveName: string;
  /** `Class.method` the failover is declared on. */
  method: string;
}

/**
 * Layer 1 of a failover key: turns the method's arguments into a raw key. Implement it as a
 * Nest provider (it may inject what it needs) or pass an instance; `context` names the failover.
 */
export interface KeyGenerator {
  key(args: readonly unknown[], context?: FailoverKeyContext): string;
}
