import { parseDuration, type Duration } from '@holdfast/core/kit';
import { FailoverConfigurationError } from '../errors';
import type { KeyGenerator } from '../key/key-generator';
import type { ExecutionOptions } from '../failover.options';
import { JAVA_CLASS_NAME, type Class, type DeclaredPayloadType } from '../payload/payload-type';
import type { PayloadSplitter } from '../scatter/payload-splitter';
import { MAX_FAILOVER_NAME_LENGTH } from '../store/failover-store.table';

/** PAYLOAD_CLASS is VARCHAR(256). */
const MAX_PAYLOAD_CLASS_LENGTH = 256;

/** Options of @Failover(). */
export interface FailoverOptions {
  /** Unique in the application; at most 50 characters. */
  name: string;
  /** How long a stored value may be served. Default 1h. */
  expiry?: Duration;
  /**
   * Entries are stored under the domain instead of the name: failovers of one domain share them.
   * A blank domain (`''`, `'  '`) means the name, as in the seed.
   */
  domain?: string;
  /** The payload class (or `[Class]` for arrays), to rebuild instances on recovery. */
  type?: DeclaredPayloadType;
  /**
   * The Java class PAYLOAD_CLASS holds for this failover's values, so that a Java service on the
   * same FAILOVER_STORE (Société Générale's failover: `Class.forName(PAYLOAD_CLASS)`, then
   * Jackson) can read them: `'com.acme.Country'`; for a list, the list class a Java method
   * returning `List<Country>` stores, `'java.util.ArrayList'` (Java rebuilds its elements as maps,
   * as it does with its own rows), or the array class `'[Lcom.acme.Country;'`, which carries the
   * element class (for a Java method returning `Country[]`). Holdfast rebuilds them as `type`.
   * Default: the registered name of `type` (`Country`, `Country[]`), or the JSON shape (`Object`).
   */
  javaClass?: string;
  /**
   * A KeyGenerator: a class (resolved through DI: the provider if the app registers one, else
   * built in the declaring module with its own injected dependencies), an instance, or the
   * injection token (string) of a provider.
   */
  keyGenerator?: Class<KeyGenerator> | KeyGenerator | string;
  /** Which upstream errors may be answered from the store; others are rethrown at once. */
  recoverOn?: (error: unknown) => boolean;
  /** Scatter/gather: stores each slice of the payload under its own key (a class resolved through DI, or an instance). */
  payloadSplitter?: Class<PayloadSplitter> | PayloadSplitter;
  /** With a splitter: recover every stored entry of the failover, whatever the arguments. */
  recoverAll?: boolean;
  /** This failover's execution (overrides the module's `execution`). */
  execution?: ExecutionOptions;
  /**
   * A fresh window: while the stored value is younger than this (by `AS_OF`, on the store's
   * clock), a call answers with it and the upstream is not called. Past it, the upstream is
   * called as without the option (and its failure answered from the store until `expiry`).
   * At most `expiry`. Not with a `payloadSplitter`. Default: none (every call reaches the upstream).
   */
  fresh?: Duration;
  /**
   * Refresh-ahead (stale-while-revalidate) inside the fresh window: a call that finds the stored
   * value older than this (but still fresh) is answered with it at once, and one background call
   * of the upstream (per key, in this process) stores a newer value. Needs `fresh`, less than it.
   */
  refreshAfter?: Duration;
  /**
   * Single-flight: calls with the same key that arrive while one is running share its upstream
   * call and its answer (the value, the stored value recovered, or the error), in this process.
   * During an outage the upstream sees one attempt per key at a time instead of one per caller.
   * The callers then share one answer object. Default false.
   */
  singleFlight?: boolean;
  /**
   * The FailoverModule that serves this failover: the one registered with
   * `FailoverModule.forRoot({ name: store })`. Default: the module without a name.
   */
  store?: string;
}

/** The validated declaration, attached to the method. */
export interface FailoverMetadata extends FailoverOptions {
  effectiveName: string;
  expiryMs: number;
  /** The fresh window in ms (0: none). */
  freshMs: number;
  /** Refresh-ahead age in ms inside the fresh window, when set. */
  refreshAfterMs?: number;
  /** `Class.method` it is declared on. */
  method: string;
}

export const DEFAULT_FAILOVER_EXPIRY = '1h';

/** Throws the FailoverConfigurationError that names the decorated method. */
type Fail = (what: string) => never;

export function failoverMetadata(options: FailoverOptions, where: string): FailoverMetadata {
  const fail: Fail = (what) => {
    throw new FailoverConfigurationError(`@Failover() on ${where}: ${what}`);
  };
  if (!options || typeof options !== 'object') fail('options with a name are required');
  const ownDomain = checkNameAndDomain(options, fail);
  checkParts(options, fail);
  const { expiryMs, freshMs, refreshAfterMs } = checkDurations(options, fail);
  if (options.singleFlight !== undefined && typeof options.singleFlight !== 'boolean')
    fail(`'singleFlight' must be a boolean, got ${JSON.stringify(options.singleFlight)}`);
  return {
    ...options,
    domain: ownDomain,
    effectiveName: ownDomain ?? options.name,
    expiryMs,
    freshMs,
    refreshAfterMs,
    method: where,
  };
}

/** Checks `name` and `domain`; returns the domain the entries are stored under, if any. */
function checkNameAndDomain({ name, domain }: FailoverOptions, fail: Fail): string | undefined {
  if (typeof name !== 'string' || name.trim() === '')
    fail(`'name' must be a non-empty string, got ${JSON.stringify(name)}`);
  if (name.length > MAX_FAILOVER_NAME_LENGTH) {
    fail(`'name' ${JSON.stringify(name)} is longer than ${MAX_FAILOVER_NAME_LENGTH} characters`);
  }
  if (domain !== undefined && (typeof domain !== 'string' || domain.length > MAX_FAILOVER_NAME_LENGTH)) {
    fail(
      `'domain' must be a string of at most ${MAX_FAILOVER_NAME_LENGTH} characters, got ${JSON.stringify(domain)}`,
    );
  }
  // As in the seed (`domain().isBlank() ? name() : domain()`): a blank domain is no domain, so
  // a Java service and this one agree on FAILOVER_NAME, and '  ' is never a domain of its own.
  return domain === undefined || domain.trim() === '' ? undefined : domain;
}

/** Checks the classes, functions and names the failover is given: type, javaClass, store, recoverOn, keyGenerator, payloadSplitter. */
function checkParts(options: FailoverOptions, fail: Fail): void {
  if (options.type !== undefined) {
    const cls = Array.isArray(options.type) ? options.type[0] : options.type;
    if (typeof cls !== 'function') fail(`'type' must be a class or [Class], got ${String(options.type)}`);
  }
  if (
    options.javaClass !== undefined &&
    (typeof options.javaClass !== 'string' ||
      options.javaClass.length > MAX_PAYLOAD_CLASS_LENGTH ||
      !JAVA_CLASS_NAME.test(options.javaClass))
  ) {
    fail(
      `'javaClass' must be a Java binary class name of at most ${MAX_PAYLOAD_CLASS_LENGTH} characters ` +
        `(com.acme.Country, com.acme.Rates$Quote, java.util.ArrayList, [Lcom.acme.Country;), got ${JSON.stringify(options.javaClass)}`,
    );
  }
  if (options.store !== undefined && (typeof options.store !== 'string' || options.store.trim() === ''))
    fail(`'store' must be the non-empty name of a FailoverModule, got ${JSON.stringify(options.store)}`);
  if (options.recoverOn !== undefined && typeof options.recoverOn !== 'function')
    fail(`'recoverOn' must be a function`);
  const { keyGenerator, payloadSplitter } = options;
  if (
    keyGenerator !== undefined &&
    typeof keyGenerator !== 'string' &&
    typeof keyGenerator !== 'function' &&
    typeof (keyGenerator as KeyGenerator)?.key !== 'function'
  )
    fail(`'keyGenerator' must be a KeyGenerator class, an instance with key(), or an injection token`);
  if (
    payloadSplitter !== undefined &&
    typeof payloadSplitter !== 'function' &&
    typeof (payloadSplitter as PayloadSplitter)?.splitOnStore !== 'function'
  )
    fail(`'payloadSplitter' must be a PayloadSplitter class or instance`);
}

/** Parses `expiry`, `fresh` and `refreshAfter` and checks how they fit together. */
function checkDurations(
  options: FailoverOptions,
  fail: Fail,
): { expiryMs: number; freshMs: number; refreshAfterMs: number | undefined } {
  let expiryMs = 0;
  try {
    expiryMs = parseDuration(options.expiry ?? DEFAULT_FAILOVER_EXPIRY, 'expiry');
  } catch (error) {
    fail((error as Error).message);
  }
  const duration = (value: Duration | undefined, option: string): number | undefined => {
    if (value === undefined) return undefined;
    try {
      return parseDuration(value, option);
    } catch (error) {
      return fail((error as Error).message);
    }
  };
  const freshMs = duration(options.fresh, 'fresh') ?? 0;
  const refreshAfterMs = duration(options.refreshAfter, 'refreshAfter');
  if (options.fresh !== undefined && !(freshMs > 0)) fail(`'fresh' must be a positive duration`);
  if (freshMs > expiryMs)
    fail(
      `'fresh' (${freshMs} ms) must not be longer than 'expiry' (${expiryMs} ms): a value is served only until it expires`,
    );
  if (freshMs && options.payloadSplitter !== undefined)
    fail(`'fresh' cannot be used with a 'payloadSplitter' (slices are stored apart)`);
  if (refreshAfterMs !== undefined && !freshMs) fail(`'refreshAfter' needs 'fresh'`);
  if (refreshAfterMs !== undefined && !(refreshAfterMs >= 0 && refreshAfterMs < freshMs))
    fail(`'refreshAfter' (${refreshAfterMs} ms) must be less than 'fresh' (${freshMs} ms)`);
  return { expiryMs, freshMs, refreshAfterMs };
}
