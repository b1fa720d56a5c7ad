/**
 * NEXT_RETRY carries all scheduling state, so the table keeps exactly the reference's columns:
 *
 * - `NULL` or a time ≤ now: due.
 * - a time > now and below {@link SENTINEL_FLOOR}: waiting — for a retry after a failure, or
 *   leased to a node that is delivering it (the lease ends at that time: the visibility timeout).
 * - {@link PAUSED}: paused by an admin until `resume`.
 * - {@link PARKED}: failed more than `maxRetries` times; no more attempts until an admin acts.
 *
 * The sentinels are far in the future (years ~250,000+), so the due condition
 * `NEXT_RETRY IS NULL OR NEXT_RETRY <= now` excludes them without a further test, and they stay
 * below 2^53 so JavaScript numbers read them exactly.
 */
export const SENTINEL_FLOOR = 7_000_000_000_000_000;
export const PAUSED = 8_000_000_000_000_000;
export const PARKED = 9_000_000_000_000_000;
