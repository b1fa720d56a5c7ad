import { parseDuration } from '@holdfast/core/kit';
import { InboxRateLimitError } from '../errors';
import type { InboxRateLimits } from '../inbox.options';
import { MAX_RATE_KEY_LENGTH } from '../store/inbox-rate.table';

/** One type's limit as the delivery loop uses it. */
export interface ResolvedRateLimit {
  limit: number;
  intervalMs: number;
}

const MAX_LIMIT = 1_000_000;
const MAX_INTERVAL_MS = 24 * 60 * 60 * 1000;

/**
 * The option `rateLimits` checked entry by entry (InboxRateLimitError naming the type and what is
 * wrong): by type name, each limit an integer of 1 to 1,000,000 per interval of 1 ms to 1 day.
 * Undefined when no type is limited.
 */
export function resolveRateLimits(
  option: InboxRateLimits | undefined,
): ReadonlyMap<string, ResolvedRateLimit> | undefined {
  if (option === undefined) return undefined;
  if (option === null || typeof option !== 'object' || Array.isArray(option))
    throw new InboxRateLimitError('', '', 'must be an object of message type names');
  const limits = new Map<string, ResolvedRateLimit>();
  for (const [type, entry] of Object.entries(option)) {
    if (type === '' || type.length > MAX_RATE_KEY_LENGTH)
      throw new InboxRateLimitError(
        type,
        '',
        `must be a type name of 1 to ${MAX_RATE_KEY_LENGTH} characters`,
      );
    if (entry === null || typeof entry !== 'object')
      throw new InboxRateLimitError(type, '', 'must be an object { limit, interval }');
    const { limit, interval } = entry as { limit?: unknown; interval?: unknown };
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
      throw new InboxRateLimitError(
        type,
        'limit',
        `must be an integer of 1 to 1,000,000, got ${String(limit)}`,
      );
    let intervalMs: number;
    try {
      intervalMs = parseDuration(interval as never, `rateLimits.${type}.interval`);
    } catch (error) {
      throw new InboxRateLimitError(type, 'interval', `is not a duration (${(error as Error).message})`);
    }
    if (!Number.isFinite(intervalMs) || intervalMs < 1 || intervalMs > MAX_INTERVAL_MS)
      throw new InboxRateLimitError(type, 'interval', `must be 1 ms to 1 day, got ${String(interval)}`);
    limits.set(type, { limit, intervalMs: Math.round(intervalMs) });
  }
  return limits.size ? limits : undefined;
}
