/** The server ends a silent lock transaction this long after its last statement. */
export function idleTimeoutFor(keepAlivePeriod: number): number {
  return Math.ceil(keepAlivePeriod * 1.5) + 1_000;
}

/** The master stops trusting its lock this long before the server could end its transaction. */
export function safetyMargin(idleTimeout: number): number {
  return Math.min(2_000, Math.floor(idleTimeout / 4));
}

/** A bound for each lock statement and for the wait for a pooled connection. */
export function statementTimeoutFor(lockAcquireSleepInterval: number, keepAlivePeriod: number): number {
  const base =
    keepAlivePeriod > 0 ? Math.min(keepAlivePeriod, lockAcquireSleepInterval) : lockAcquireSleepInterval;
  return Math.max(2_000, Math.min(base, 10_000));
}
