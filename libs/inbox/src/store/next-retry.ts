/**
 * Scheduling state lives in the seed's columns, read the way camunda-bpm-correlate reads them
 * (its `MessageEntity.status` and its batch filter), with `maxRetries` the inbox's option:
 *
 * - `RETRIES >= maxRetries`: parked, its attempts exhausted (the peer's MAX_RETRIES_REACHED),
 *   whatever `NEXT_RETRY` says: a past NEXT_RETRY does not make it due, FAR_FUTURE does not make
 *   it paused. No more attempts until an admin acts (retry now, or fewer retries).
 * Otherwise (`RETRIES < maxRetries`):
 * - `NEXT_RETRY IS NULL`: due (a fresh message has RETRIES = 0).
 * - `NEXT_RETRY` ≤ now: due (a retry whose time has come, or a lease that ran out).
 * - `NEXT_RETRY` > now and before {@link FAR_FUTURE}: waiting, either for a retry after a
 *   failure or while a node delivers it (the delivery lease: it ends at that time).
 * - `NEXT_RETRY` = {@link FAR_FUTURE}: paused by an admin (the seed's own pause marker).
 *
 * RETRIES counts attempts that failed. A Java reader of the same table sees real times: the
 * time of the next attempt, or the end of the running delivery's lease, which is when the
 * message is tried again should that node die.
 *
 * Admin writes leave rows the peer reads the same way: "retry now" sets NEXT_RETRY to now and,
 * on an exhausted message, RETRIES to maxRetries − 1 (one more attempt; the peer's cockpit does
 * the same: lower the retries below the maximum and set the next retry); "resume" clears
 * NEXT_RETRY when RETRIES is 0 and sets it to now otherwise (the peer's resume: a row with
 * failed attempts and no NEXT_RETRY is never picked up by the peer).
 */
/**
 * camunda-bpm-correlate's `MessageEntity.FAR_FUTURE`: NEXT_RETRY of a paused message. A column
 * that cannot hold it (MySQL/MariaDB `TIMESTAMP`, which ends in 2038) cannot pause messages.
 */
export const FAR_FUTURE = Date.parse('4999-12-03T10:15:30Z');
