import {
  formatIsoDuration,
  InvalidDurationError,
  parseDuration,
  parseIsoDuration,
  type Duration,
} from '@holdfast/core/kit';

export interface ParsedTtl {
  /** The ISO-8601 text stored in TTL_DURATION. */
  iso: string;
  ms: number;
}

/**
 * Parses an ISO-8601 duration ('PT10M', 'P1DT2H') with core's duration parser (the one every
 * Holdfast option uses). Calendar units are fixed lengths (a month is 30 days, a year 365).
 * Returns undefined when the text is not a valid, positive ISO-8601 duration.
 */
export function parseIsoTtl(value: unknown): ParsedTtl | undefined {
  if (typeof value !== 'string' || !/^P/i.test(value.trim())) return undefined;
  const iso = value.trim().toUpperCase();
  const ms = parseIsoDuration(iso);
  if (ms === undefined || !Number.isFinite(ms) || ms <= 0) return undefined;
  return { iso, ms };
}

/** The module's defaultTtl (ISO-8601 or a Holdfast Duration) as a parsed ISO-8601 TTL. */
export function defaultTtlToIso(value: Duration): ParsedTtl {
  const iso = parseIsoTtl(value);
  if (iso) return iso;
  if (typeof value === 'string' && /^P/i.test(value.trim()))
    throw new InvalidDurationError('defaultTtl', value);
  const ms = parseDuration(value, 'defaultTtl');
  if (ms <= 0) throw new InvalidDurationError('defaultTtl', value);
  return { iso: formatIsoDuration(ms), ms };
}
