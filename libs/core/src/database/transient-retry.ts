import { ExponentialBackoff, handleWhen, retry } from 'cockatiel';
import { isTransientConflictError } from './sql-errors';

/**
 * Retries a statement that lost a deadlock or a serialization conflict (MariaDB range deletes
 * against concurrent inserts, PostgreSQL serialization failures, SQLite busy): up to
 * `maxAttempts` tries with jittered exponential backoff from 5 ms. Other errors pass through.
 */
export function withTransientRetry<T>(work: () => Promise<T>, maxAttempts = 5): Promise<T> {
  const policy = retry(handleWhen(isTransientConflictError), {
    maxAttempts: maxAttempts - 1,
    backoff: new ExponentialBackoff({ initialDelay: 5, maxDelay: 200 }),
  });
  return policy.execute(() => work());
}
