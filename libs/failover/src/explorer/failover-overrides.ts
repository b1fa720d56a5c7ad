import { Inject, Injectable, Optional, type InjectionToken } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { FailoverConfigurationError } from '../errors';
import { DEFAULT_FAILOVER_STORE } from '../failover.constants';
import { FAILOVER_RESOLVED_OPTIONS, FAILOVER_STORE_NAME } from '../failover.tokens';
import { FAILOVER_STORES } from '../failover.tokens';

type Wrapper = ReturnType<DiscoveryService['getProviders']>[number];

/** The name a token is printed with in an error. */
function tokenName(token: InjectionToken): string {
  return typeof token === 'function' ? token.name : String(token);
}

/**
 * The application's own providers of FailoverModule's replaceable parts (`FAILOVER_KEY_GENERATOR`,
 * `FailoverStoreQueryResolver`, `PayloadColumnResolver`). The module registers a default under
 * each token; a provider the application registers under the same token, in any module of its
 * own, with whatever it injects, takes over, as a Spring bean of the seed's type makes the
 * auto-configuration back off. A named FailoverModule looks for its named token
 * (`getFailoverToken(Class, name)`, `holdfast:failover:<name>:key-generator`) first, then the
 * plain one. Read once the application's providers exist (from `onModuleInit` on).
 */
@Injectable()
export class FailoverOverrides {
  private readonly found = new Map<InjectionToken, unknown>();

  constructor(
    private readonly discovery: DiscoveryService,
    @Optional() @Inject(FAILOVER_STORE_NAME) private readonly storeName: string = DEFAULT_FAILOVER_STORE,
  ) {}

  /**
   * The application's provider under `token`, or undefined when it registers none. Two modules
   * that each register one stop the bootstrap: which one wins would depend on import order.
   */
  find<T>(token: InjectionToken, named?: string): T | undefined {
    if (this.found.has(token)) return this.found.get(token) as T | undefined;
    const tokens: InjectionToken[] = FAILOVER_STORES.isDefault(this.storeName)
      ? [token]
      : [named ?? FAILOVER_STORES.token(token as never, this.storeName), token];
    let instance: T | undefined;
    for (const candidate of tokens) {
      const wrappers = this.discovery
        .getProviders()
        .filter((wrapper) => wrapper.token === candidate && !this.inFailoverModule(wrapper));
      if (wrappers.length > 1)
        throw new FailoverConfigurationError(
          `${tokenName(candidate)} is provided by ${wrappers.length} modules ` +
            `(${wrappers.map((w) => w.host?.metatype?.name ?? '?').join(', ')}): register one replacement only`,
        );
      const [wrapper] = wrappers;
      if (!wrapper) continue;
      if (!wrapper.isDependencyTreeStatic() || wrapper.instance === undefined || wrapper.instance === null)
        throw new FailoverConfigurationError(
          `${tokenName(candidate)} provided by ${wrapper.host?.metatype?.name ?? '?'} must be a singleton ` +
            `(not request- or transient-scoped): FailoverModule uses one instance`,
        );
      instance = wrapper.instance as T;
      break;
    }
    this.found.set(token, instance);
    return instance;
  }

  /** FailoverModule's own defaults (and a named module's aliases) are not replacements. */
  private inFailoverModule(wrapper: Wrapper): boolean {
    return wrapper.host?.providers.has(FAILOVER_RESOLVED_OPTIONS) === true;
  }
}
