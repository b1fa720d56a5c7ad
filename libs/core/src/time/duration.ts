import ms from 'ms';
import { InvalidDurationError } from '../errors/holdfast.error';

/**
 * Milliseconds, a string the `ms` library understands ('500ms', '10s', '5m', '1h', '2d'), or an
 * ISO-8601 duration ('PT10M', 'P1DT2H'): every Holdfast option and TTL takes either syntax.
 */
export type Duration = number | string;

/** How long each ISO-8601 unit is: calendar units as fixed lengths (a month 30 days, a year 365). */
const DAY = 86_400_000;
const ISO_UNITS_MS = [365 * DAY, 30 * DAY, 7 * DAY, DAY, 3_600_000, 60_000, 1000];
const NUMBER = String.raw`(\d+(?:[.,]\d+)?)`;
/** P[nY][nM][nW][nD][T[nH][nM][nS]], at least one part, and a T only before a time part. */
const ISO_DURATION = new RegExp(
  `^P(?=\\d|T\\d)(?:${NUMBER}Y)?(?:${NUMBER}M)?(?:${NUMBER}W)?(?:${NUMBER}D)?` +
    `(?:T(?=\\d)(?:${NUMBER}H)?(?:${NUMBER}M)?(?:${NUMBER}S)?)?$`,
  'i',
);

/**
 * An ISO-8601 duration in milliseconds, or undefined when `text` is not one. Calendar units are
 * fixed lengths (as luxon's casual conversion, which the inbox used before: a month is 30 days,
 * a year 365): a TTL is a span of time, not a calendar date.
 */
export function parseIsoDuration(text: string): number | undefined {
  const match = ISO_DURATION.exec(text.trim());
  if (!match) return undefined;
  let total = 0;
  for (let i = 0; i < ISO_UNITS_MS.length; i++) {
    const part = match[i + 1];
    if (part !== undefined) total += Number(part.replace(',', '.')) * ISO_UNITS_MS[i];
  }
  return Number.isFinite(total) ? total : undefined;
}

/** `ms` as an ISO-8601 duration in seconds ('PT3600S', 'PT0.5S'), the form TTL_DURATION stores. */
export function formatIsoDuration(ms: number): string {
  return `PT${ms / 1000}S`;
}

/** The duration in milliseconds; InvalidDurationError (naming `option`) for anything else. */
export function parseDuration(value: Duration, option = 'duration'): number {
  if (typeof value === 'number') {
    if (Number.isFinite(value) && value >= 0) return value;
    throw new InvalidDurationError(option, value);
  }
  if (typeof value === 'string' && value.trim() !== '') {
    const text = value.trim();
    const parsed = /^\d+(\.\d+)?$/.test(text)
      ? Number(text)
      : /^P/i.test(text)
        ? parseIsoDuration(text)
        : ms(text as ms.StringValue);
    if (typeof parsed === 'number' && Number.isFinite(parsed) && parsed >= 0) return parsed;
  }
  throw new InvalidDurationError(option, value);
}

export function isDuration(value: unknown): value is Duration {
  try {
    parseDuration(value as Duration);
    return true;
  } catch {
    return false;
  }
}
