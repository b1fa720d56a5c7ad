/**
 * The reserved key of the row that remembers the PostgreSQL timeline a coordination table was last
 * written on: Simba's `simba_mutex` and the locker's `HOLDFAST_LOCK` each keep one, for their grace
 * after a lossy failover (#36). Never a mutex's or a lock's name.
 */
export const TIMELINE_MARKER = 'holdfast:timeline';
