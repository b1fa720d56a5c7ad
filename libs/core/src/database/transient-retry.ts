import { declareMetrics } from '../metrics/declare-metrics';
import type { MetricAttributes } from '../metrics/meter';
import { ExponentialBackoff, handleWhen, retry, type RetryPolicy } from 'cockatiel';
import { isTransientConflictError, sqlErrorCode } from './sql-errors';

/** One retry that is about to happen, as `onRetry` sees it. */
export interface TransientRetry {
  /** The try that failed (1 = the first). */
  attempt: number;
  /** The driver's code: `40P01`, `40001`, `ER_LOCK_DEADLOCK`, `ER_LOCK_WAIT_TIMEOUT`, `SQLITE_BUSY`. */
  code: string;
  /** What the caller named the work (`accept`, `claim`...), when it did. */
  operation?: string;
  error: unknown;
}

export interface TransientRetryOptions {
  /** Tries in all, the first included (default 10: about 1 s of backoff in all, see withTransientRetry). */
  maxAttempts?: number;
  /** A name for the work, passed to `onRetry` (and a metrics attribute with `sqlRetryCounter`). */
  operation?: string;
  /** Called once before each retry, e.g. `sqlRetryCounter('inbox')`. Must not throw. */
  onRetry?: (retry: TransientRetry) => void;
}

const policies = new Map<number, RetryPolicy>();

/** One shared policy per bound: jittered exponential backoff from 5 ms, at most 500 ms apart. */
function policy(retries: number): RetryPolicy {
  let found = policies.get(retries);
  if (!found) {
    found = retry(handleWhen(isTransientConflictError), {
      maxAttempts: retries,
      backoff: new ExponentialBackoff({ initialDelay: 5, maxDelay: 500 }),
    });
    policies.set(retries, found);
  }
  return found;
}

/**
 * Retries work that lost a deadlock, a serialization conflict or a lock wait (PostgreSQL
 * 40P01/40001, MySQL/MariaDB 1213/1205, SQLite busy, a Galera certification failure at COMMIT):
 * up to `maxAttempts` tries in all, with cockatiel's jittered exponential backoff (5 ms up to
 * 500 ms apart). The first try runs directly, so the common path costs nothing; other errors pass
 * through, and the last conflict reaches the caller when the bound is spent.
 *
 * The default of 10 tries waits 0.9-1.3 s in all between them (cockatiel's jitter, measured over
 * 1,000 runs): on Galera, the transactions that waited through the cluster's stall after a node
 * died (the group's `evs.suspect_timeout`) all commit at once when it ends and fail certification
 * against each other for a moment; the old bound, 5 tries with 30-55 ms of waiting in all, was
 * spent inside that burst, and the inbox's claim then failed as an ERROR.
 *
 * Wrap a whole transaction (`() => sql.transaction(...)`) or a single autocommit statement, never
 * one statement inside a transaction: a deadlock has rolled the whole transaction back, and a
 * retried statement would run without its earlier ones.
 */
export async function withTransientRetry<T>(
  work: () => Promise<T>,
  options: number | TransientRetryOptions = {},
): Promise<T> {
  const {
    maxAttempts = 10,
    operation,
    onRetry,
  } = typeof options === 'number' ? { maxAttempts: options } : options;
  let failure: unknown;
  try {
    return await work();
  } catch (error) {
    if (!isTransientConflictError(error) || maxAttempts <= 1) throw error;
    failure = error;
  }
  // The policy's own first run re-raises the failure above, so its backoff comes before every retry.
  return policy(maxAttempts - 1).execute(async ({ attempt }) => {
    if (attempt === 0) throw failure;
    try {
      onRetry?.({ attempt, code: sqlErrorCode(failure) ?? 'unknown', operation, error: failure });
    } catch {
      // A broken metrics hook must not turn a retry into a failure.
    }
    try {
      return await work();
    } catch (error) {
      failure = error;
      throw error;
    }
  });
}

/**
 * An `onRetry` hook counting retries in the OpenTelemetry counter `holdfast.<lib>.sql.retries`
 * (attributes `db.response.status_code`, the semantic conventions' name for the server's error
 * code, and, when given, `holdfast.operation`). No-op without an SDK.
 */
export function sqlRetryCounter(lib: string): (retry: TransientRetry) => void {
  const { counter } = declareMetrics(lib, {
    counter: {
      kind: 'counter',
      name: 'sql.retries',
      unit: '{retry}',
      description:
        'SQL statements or transactions retried after a deadlock, serialization failure or lock wait',
      attributes: ['db.response.status_code', 'holdfast.operation'],
    },
  });
  return (r) => {
    const attributes: MetricAttributes = { 'db.response.status_code': r.code };
    if (r.operation) attributes['holdfast.operation'] = r.operation;
    counter.add(1, attributes);
  };
}
