import ms from 'ms';
import { InvalidDurationError } from '../errors/holdfast.error';

/** Milliseconds, or a string the `ms` library understands: '500ms', '10s', '5m', '1h', '2d'. */
export type Duration = number | string;

/** The duration in milliseconds; InvalidDurationError (naming `option`) for anything else. */
export function parseDuration(value: Duration, option = 'duration'): number {
  if (typeof value === 'number') {
    if (Number.isFinite(value) && value >= 0) return value;
    throw new InvalidDurationError(option, value);
  }
  if (typeof value === 'string' && value.trim() !== '') {
    const parsed = /^\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : ms(value as ms.StringValue);
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
