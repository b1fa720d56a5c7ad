import {
  StatementBinder,
  TIMELINE_MARKER,
  type SqlBinder,
  type SqlDialect,
  type Statement,
} from '@holdfast/core/kit';

/**
 * The row of `simba_mutex` that remembers the PostgreSQL timeline the table was last written on
 * (in `acquired_at`); never a mutex of its own: the name is reserved.
 */
export { TIMELINE_MARKER };

/**
 * No grant during a lease the old primary may have granted and the new one lost (#36). A
 * PostgreSQL standby promoted after its primary died may miss the last commits, a grant among
 * them, and would hand the mutex to a second owner while the lost grant's owner still believes it
 * owns. So every grant runs behind this check, in the same statement (the tick's CTEs, `ctes`)
 * or the same transaction (`check`): when the table's marker row names another timeline than the
 * server's, the table was last written before a promotion, and the check (once, for the first
 * transaction on the new timeline, whichever
 * instance runs it, a freshly started one too) moves the marker to the new timeline and clears
 * every owner with `ttl_at`/`transition_at` at least `graceMs` ahead. Nobody acquires before that
 * has passed, and no owner renews: the row the new primary holds may be stale, and an owner it
 * names may have been superseded by the lost grant. `graceMs` is the longest lease (ttl +
 * transition) the instance's contenders ask for, counted from the detection, which comes after
 * the crash: the lost grant's owner steps down at its local deadline, within its ttl.
 *
 * Only PostgreSQL: MariaDB Galera is synchronous and loses no commit on a node's death, and
 * SQLite has no failover. Undefined elsewhere.
 */
export class FailoverGrace {
  constructor(
    private readonly dialect: SqlDialect,
    private readonly table: string,
  ) {}

  /** Where a promotion can lose commits: the dialect has a timeline (PostgreSQL). */
  get enabled(): boolean {
    return this.dialect.timeline !== undefined;
  }

  private get timeline(): string {
    return this.dialect.timeline!;
  }

  /** Creates the marker with the current timeline if the table has none (no grace for a new table). */
  ensureMarker(): Statement | undefined {
    if (!this.enabled) return undefined;
    const b = new StatementBinder(this.dialect);
    return b.statement(
      `INSERT INTO ${this.table} (mutex, acquired_at, ttl_at, transition_at, owner_id, version) ` +
        `SELECT ${b.bind(TIMELINE_MARKER)}, ${this.timeline}, 0, 0, '', 0 ON CONFLICT (mutex) DO NOTHING`,
    );
  }

  /**
   * Detects a promotion since the table's last write and, if there was one, starts the grace.
   * Costs one indexed read of the marker when nothing changed (the second UPDATE runs only when the
   * first moved the marker).
   */
  check(graceMs: number): Statement | undefined {
    const b = new StatementBinder(this.dialect);
    const grace = this.ctes(b, graceMs);
    if (!grace) return undefined;
    return b.statement(`WITH ${grace.sql} SELECT COUNT(*) AS held FROM ${grace.graced}`);
  }

  /**
   * The grace as data-modifying CTEs of a larger statement (the tick's, see
   * MutexQueryResolver.tick): `moved` has a row when this statement moved the marker, and a
   * grant in the same statement must then wait (`NOT EXISTS (SELECT 1 FROM moved)`: a row is
   * updated once per statement); `graced` returns the rows it held, as they are now. `guard`, a
   * condition, goes into both UPDATEs (a lock-wait bound, evaluated before either can wait).
   */
  ctes(
    b: SqlBinder,
    graceMs: number,
    guard?: string,
  ): { sql: string; moved: string; graced: string } | undefined {
    if (!this.enabled) return undefined;
    const now = this.dialect.nowMillis;
    // Each value bound where it appears: `?` placeholders bind by position.
    const marker = () => b.bind(TIMELINE_MARKER);
    const grace = () => b.bind(Math.ceil(graceMs));
    const columns = 'mutex, acquired_at, ttl_at, transition_at, owner_id, version';
    return {
      sql:
        `hf_timeline AS (SELECT ${this.timeline} AS id), ` +
        `hf_moved AS (UPDATE ${this.table} SET acquired_at = (SELECT id FROM hf_timeline), version = version + 1 ` +
        `WHERE mutex = ${marker()} AND acquired_at <> (SELECT id FROM hf_timeline)${guard ? ` AND ${guard}` : ''} RETURNING mutex), ` +
        `hf_graced AS (UPDATE ${this.table} SET owner_id = '', ttl_at = GREATEST(ttl_at, ${now} + ${grace()}), ` +
        `transition_at = GREATEST(transition_at, ${now} + ${grace()}), version = version + 1 ` +
        `WHERE mutex <> ${marker()} AND EXISTS (SELECT 1 FROM hf_moved)${guard ? ` AND ${guard}` : ''} RETURNING ${columns})`,
      moved: 'hf_moved',
      graced: 'hf_graced',
    };
  }
}
