import { Injectable, Logger } from '@nestjs/common';
import {
  FailoverKeyError,
  FailoverStoreException,
  MalformedPayloadError,
  PayloadDecryptionError,
} from '../errors';
import { FailoverMetrics } from '../metrics/failover.metrics';

/** Which part of Holdfast failed a call, leaving it to the upstream alone. */
export type BypassCause = 'key' | 'codec' | 'cipher' | 'store';

/** Most distinct (failover, cause) pairs remembered for the warn-once rule; past it, only counted. */
const MAX_REMEMBERED = 1_000;

/** The cause of an error raised by Holdfast's own part of a call. */
export function bypassCause(error: unknown): BypassCause {
  if (error instanceof FailoverKeyError) return 'key';
  if (error instanceof PayloadDecryptionError) return 'cipher';
  if (error instanceof MalformedPayloadError || error instanceof FailoverStoreException) return 'codec';
  // JSON.stringify on a cycle or a BigInt.
  if (error instanceof TypeError && /circular|BigInt/i.test(error.message)) return 'codec';
  return 'store';
}

/**
 * A decorator must never fail a call the plain method would have answered: when Holdfast's own
 * part (the key, the codec, the cipher, the store) fails, the call is the upstream's alone. This
 * reports it: one warning per failover and cause (a cycle and a function in an argument are two
 * causes; the same cycle on every call is one), and `holdfast.failover.bypassed` on every call.
 */
@Injectable()
export class FailoverBypass {
  private readonly warned = new Set<string>();
  private readonly logger = new Logger('FailoverExecutor');

  constructor(private readonly metrics: FailoverMetrics) {}

  report(failover: string, cause: BypassCause, error: unknown): void {
    this.metrics.bypassed(failover, cause);
    const id = `${failover}\u0000${cause}\u0000${detail(error)}`;
    if (this.warned.has(id) || this.warned.size >= MAX_REMEMBERED) return;
    this.warned.add(id);
    const message = (error as Error)?.message ?? String(error);
    const where =
      cause === 'key'
        ? 'the call went to the upstream alone: nothing stored, nothing recovered'
        : 'the upstream answered the call; the store took no part in it';
    this.logger.warn(
      `${message.startsWith('Failover ') ? message : `Failover '${failover}': ${cause} failed: ${message}`} ` +
        `(${where}; warned once per failover and cause, counted in holdfast.failover.bypassed)`,
    );
  }
}

/**
 * What tells two causes apart: a key error's reason (a cycle, a function...), else the error's
 * class and code, never its message (which may hold a key or a value, and would warn per call).
 */
function detail(error: unknown): string {
  if (error instanceof FailoverKeyError) return error.reason;
  if (error instanceof Error) return `${error.name}:${String((error as { code?: unknown }).code ?? '')}`;
  return typeof error;
}
