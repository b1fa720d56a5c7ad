import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type { FailoverMetadata } from '../decorators/failover-options';
import { DEFAULT_FAILOVER_STORE } from '../failover.constants';
import type { ResolvedFailoverOptions, SqlStoreOptions } from '../failover.options';
import { FAILOVER_RESOLVED_OPTIONS, FAILOVER_STORE_NAME, getFailoverStoreToken } from '../failover.tokens';
import { FailoverTypeRegistry } from '../payload/failover-type.registry';
import type { FailoverStore } from '../store/failover-store';
import { FailoverRegistry } from './failover.registry';

function splitterName(splitter: FailoverMetadata['payloadSplitter']): string {
  if (!splitter) return '-';
  return typeof splitter === 'function' ? splitter.name : (splitter.constructor?.name ?? 'instance');
}

/** What the explorer records of the failovers it finds: their payload types and the list. */
@Injectable()
export class FailoverDeclarations {
  constructor(
    private readonly registry: FailoverRegistry,
    private readonly types: FailoverTypeRegistry,
    @Inject(FAILOVER_RESOLVED_OPTIONS) private readonly options: ResolvedFailoverOptions,
  ) {}

  /** The payload allowlist and the module's `types`, before any failover is registered. */
  configureTypes(): void {
    const sql = this.options.store.type === 'sql' ? (this.options.store as SqlStoreOptions) : undefined;
    this.types.configure(sql?.allowedPayloadClasses, sql?.strictAllowlist);
    for (const type of this.options.types) this.types.register(type, 'FailoverModule types');
  }

  /** A discovered failover: its payload type registered, and the failover listed. */
  register(metadata: FailoverMetadata, declaredOn: string): void {
    if (metadata.type)
      this.types.register(metadata.type, `the type of @Failover('${metadata.name}') on ${declaredOn}`);
    this.registry.add({ metadata, declaredOn });
  }
}

/** The bootstrap's summary of a module's failovers (logged once the explorer found them). */
@Injectable()
export class FailoverSummary {
  private readonly logger = new Logger('FailoverExplorer');

  constructor(
    private readonly registry: FailoverRegistry,
    @Inject(FAILOVER_RESOLVED_OPTIONS) private readonly options: ResolvedFailoverOptions,
    @Inject(getFailoverStoreToken()) private readonly store: FailoverStore,
    @Optional() @Inject(FAILOVER_STORE_NAME) private readonly storeName: string = DEFAULT_FAILOVER_STORE,
  ) {}

  /** One line per failover, and warnings for set-ups that usually are mistakes. */
  log(): void {
    const store = this.store.description ?? this.options.store.type;
    const found = this.registry.list();
    for (const { metadata, declaredOn } of found) {
      this.logger.log(
        `Failover '${metadata.name}'${this.storeName === DEFAULT_FAILOVER_STORE ? '' : ` (store '${this.storeName}')`} on ${declaredOn}: domain=${metadata.domain ?? '-'} expiry=${metadata.expiryMs}ms ` +
          `store=${store}${this.options.multiTenant ? ' (per tenant)' : ''} async=${this.options.async ? 'write-behind' : 'off'} ` +
          `splitter=${splitterName(metadata.payloadSplitter)}${metadata.recoverAll ? ' recoverAll' : ''}`,
      );
      if (metadata.recoverAll && !metadata.payloadSplitter) {
        this.logger.warn(`Failover '${metadata.name}': recoverAll has no effect without a payloadSplitter`);
      }
    }
    if (found.length && this.options.store.type === 'memory' && process.env.NODE_ENV === 'production') {
      this.logger.warn(
        "Failover store is in memory (not durable): stored values are lost on restart. Use store: { type: 'sql' } in production.",
      );
    }
    const byDomain = new Map<string, Set<number>>();
    for (const { metadata } of found)
      byDomain.set(
        metadata.effectiveName,
        (byDomain.get(metadata.effectiveName) ?? new Set()).add(metadata.expiryMs),
      );
    for (const [domain, expiries] of byDomain) {
      if (expiries.size > 1) {
        this.logger.warn(
          `Failovers of domain '${domain}' have different expiries (${[...expiries].join(', ')} ms): the entry a call recovers depends on which one wrote it last`,
        );
      }
    }
  }
}
