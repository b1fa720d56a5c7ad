import { parseDuration, type Duration } from '@holdfast/core/kit';
import type { InvalidMessageError } from '../errors';
import { MAX_PRIORITY, MIN_PRIORITY } from '../store/cor-message.priority';
import type { OnExisting } from '../store/cor-message.replace';
import { parseIsoTtl, type ParsedTtl } from './ttl';

/** camunda-bpm-correlate's TTL_DURATION is VARCHAR(32): a longer ISO text would not fit a seed table. */
const TTL_COLUMN_LENGTH = 32;

/** The error for one field of the message being accepted (its index in an acceptAll). */
export type Refuse = (field: string, value: unknown, reason: string) => InvalidMessageError;

/** A text field: null when absent (and not `required`), else a non-empty string of at most `max`. */
export function checkedText(
  bad: Refuse,
  field: string,
  value: unknown,
  max: number,
  required: boolean,
): string | null {
  if (value === undefined || value === null) {
    if (required) throw bad(field, value, 'is required');
    return null;
  }
  if (typeof value !== 'string' || value.trim() === '') throw bad(field, value, 'must be a non-empty string');
  if (value.length > max) throw bad(field, value, `is ${value.length} characters long; at most ${max} fit`);
  return value;
}

/**
 * `ttl` or `expiration` (not both), else `defaultTtl`: the relative expiry, or the absolute one
 * in epoch ms.
 */
export function checkedExpiry(
  bad: Refuse,
  ttl: unknown,
  expiration: unknown,
  defaultTtl: ParsedTtl | undefined,
): { ttl?: ParsedTtl; expirationMs: number | null } {
  let parsedTtl: ParsedTtl | undefined;
  let expirationMs: number | null = null;
  if (ttl !== undefined && ttl !== null) {
    parsedTtl = parseIsoTtl(ttl);
    if (!parsedTtl) throw bad('ttl', ttl, "must be a positive ISO-8601 duration such as 'PT10M' or 'P1D'");
    if (parsedTtl.iso.length > TTL_COLUMN_LENGTH) {
      throw bad(
        'ttl',
        ttl,
        `is longer than ${TTL_COLUMN_LENGTH} characters (the seed's TTL_DURATION column)`,
      );
    }
  }
  if (expiration !== undefined && expiration !== null) {
    if (parsedTtl) throw bad('expiration', expiration, "give either 'ttl' or 'expiration', not both");
    if (!(expiration instanceof Date) || Number.isNaN(expiration.getTime())) {
      throw bad('expiration', expiration, 'must be a valid Date');
    }
    expirationMs = expiration.getTime();
  }
  if (!parsedTtl && expirationMs === null) parsedTtl = defaultTtl;
  return { ttl: parsedTtl, expirationMs };
}

/**
 * `deliverAt` / `delay`: the seed's NEXT_RETRY ("not before"). A time the column cannot hold
 * (later than `latest`), or the pause marker's, is refused.
 */
export function checkedSchedule(
  bad: Refuse,
  deliverAt: unknown,
  delay: unknown,
  latest: number,
): { notBefore?: number; delayMs?: number } {
  const hasAt = deliverAt !== undefined && deliverAt !== null;
  const hasDelay = delay !== undefined && delay !== null;
  if (hasAt && hasDelay) throw bad('delay', delay, "give either 'deliverAt' or 'delay', not both");
  if (hasAt) {
    if (!(deliverAt instanceof Date) || Number.isNaN(deliverAt.getTime()))
      throw bad('deliverAt', deliverAt, 'must be a valid Date');
    if (deliverAt.getTime() > latest)
      throw bad(
        'deliverAt',
        deliverAt,
        `is later than ${new Date(latest).toISOString()}, the latest NEXT_RETRY holds`,
      );
    return { notBefore: deliverAt.getTime() };
  }
  if (hasDelay) {
    let ms: number;
    try {
      ms = parseDuration(delay as Duration, 'delay');
    } catch {
      throw bad(
        'delay',
        delay,
        "must be a duration of 0 or more: milliseconds, '30s', '5m' or ISO-8601 'PT5M'",
      );
    }
    if (ms > latest - Date.now())
      throw bad(
        'delay',
        delay,
        `ends later than ${new Date(latest).toISOString()}, the latest NEXT_RETRY holds`,
      );
    return ms > 0 ? { delayMs: Math.ceil(ms) } : {};
  }
  return {};
}

/** `priority`: an integer from MIN_PRIORITY to MAX_PRIORITY, and only with the option `priorities`. */
export function checkedPriority(bad: Refuse, priority: unknown, enabled: boolean): number {
  if (!enabled)
    throw bad(
      'priority',
      priority,
      "priorities are off in this inbox: set the option 'priorities: true' (it needs the PRIORITY column)",
    );
  if (
    typeof priority !== 'number' ||
    !Number.isInteger(priority) ||
    priority < MIN_PRIORITY ||
    priority > MAX_PRIORITY
  )
    throw bad(
      'priority',
      priority,
      `must be an integer from ${MIN_PRIORITY} to ${MAX_PRIORITY} (lower first)`,
    );
  return priority;
}

/** `onExisting`: 'keep' (or none: undefined), 'replace' or 'debounce'. */
export function checkedOnExisting(bad: Refuse, onExisting: unknown): Exclude<OnExisting, 'keep'> | undefined {
  if (onExisting === undefined || onExisting === null || onExisting === 'keep') return undefined;
  if (onExisting !== 'replace' && onExisting !== 'debounce')
    throw bad('onExisting', onExisting, "must be 'keep', 'replace' or 'debounce'");
  return onExisting;
}
