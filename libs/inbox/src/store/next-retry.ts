/**
 * Scheduling state lives in the seed's columns, read the way camunda-bpm-correlate reads them:
 *
 * - `NEXT_RETRY IS NULL` and `RETRIES < maxRetries`: due (a fresh message has RETRIES = 0).
 * - `NEXT_RETRY` ≤ now: due (a retry whose time has come, or a lease that ran out).
 * - `NEXT_RETRY` > now and before {@link FAR_FUTURE}: waiting, either for a retry after a
 *   failure or while a node delivers it (the delivery lease: it ends at that time).
 * - `NEXT_RETRY` = {@link FAR_FUTURE}: paused by an admin (the seed's own pause marker).
 * - `NEXT_RETRY IS NULL` and `RETRIES >= maxRetries`: parked, its attempts exhausted (the seed's
 *   MAX_RETRIES_REACHED); no more attempts until an admin acts.
 *
 * RETRIES counts attempts that failed. A Java reader of the same table sees real times: the
 * time of the next attempt, or the end of the running delivery's lease, which is when the
 * message is tried again should that node die.
 */
/**
 * camunda-bpm-correlate's `MessageEntity.FAR_FUTURE`: NEXT_RETRY of a paused message. A column
 * that cannot hold it (MySQL/MariaDB `TIMESTAMP`, which ends in 2038) cannot pause messages.
 */
export const FAR_FUTURE = Date.parse('4999-12-03T10:15:30Z');
