import { ExponentialBackoff, handleWhen, retry, type RetryPolicy } from 'cockatiel';
import { isTransientConflictError } from './sql-errors';

const policies = new Map<number, RetryPolicy>();

function policy(retries: number): RetryPolicy {
  let found = policies.get(retries);
  if (!found) {
    found = retry(handleWhen(isTransientConflictError), {
      maxAttempts: retries,
      backoff: new ExponentialBackoff({ initialDelay: 5, maxDelay: 200 }),
    });
    policies.set(retries, found);
  }
  return found;
}

/**
 * Retries a statement that lost a deadlock or a serialization conflict (MariaDB range deletes
 * against concurrent inserts, PostgreSQL serialization failures, SQLite busy): up to
 * `maxAttempts` tries in all, with jittered exponential backoff from 5 ms (cockatiel). The first
 * try runs directly, so the common path costs nothing; other errors pass through.
 */
export async function withTransientRetry<T>(work: () => Promise<T>, maxAttempts = 5): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!isTransientConflictError(error) || maxAttempts <= 1) throw error;
  }
  return policy(maxAttempts - 2).execute(() => work());
}
