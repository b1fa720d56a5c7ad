import { type SqlClient, StatementBinder, type Statement } from '@holdfast/core/kit';
import type { CorMessageShared } from './cor-message.shared';
import type { NewMessageRow, Now } from './cor-message.rows';

/** What an accept does with an id that exists already (see AcceptMessage.onExisting). */
export type OnExisting = 'keep' | 'replace' | 'debounce';

/**
 * Replace and debounce by id: the message that has the id is accepted anew under it, in one
 * UPDATE by primary key (no column beyond the seed's). The row takes the new content, type, TTL
 * and expiration, INSERTED becomes now (its place in acceptance order: the back, as a new
 * message's), RETRIES 0 and ERROR none (a parked message is deliverable again). NEXT_RETRY:
 *
 * - paused (FAR_FUTURE) stays paused;
 * - `debounce`, or a message that brings `deliverAt`/`delay`: its new "not before" (none: due now);
 * - `replace` without one keeps its time. A time still ahead is moved by 1 ms: it may be the
 *   lease of a node delivering the message now (the seed has no owner column, so a lease and a
 *   retry time look alike), and a node's claim is its lease end to the millisecond, so that
 *   delivery is superseded: its delete, failure or heartbeat no longer match, its handler's signal
 *   aborts with InboxClaimLostError, `claim.fenced(…)` refuses its writes, and the new content is
 *   delivered when that lease ends.
 */
export class CorMessageReplace {
  constructor(private readonly on: CorMessageShared) {}

  /**
   * Replaces the message `row.id` if it exists; true when it did. With groups, its group row
   * follows (the new group key, the new INSERTED) in the same transaction.
   */
  async replace(row: NewMessageRow, mode: 'replace' | 'debounce', now: Now): Promise<boolean> {
    if (this.on.groupTable === undefined || row.group === undefined)
      return (await this.on.sql.execute(this.replaceStatement(row, mode, now))) > 0;
    return this.on.sql.transaction(async (tx: SqlClient) => {
      if (!(await tx.execute(this.replaceStatement(row, mode, now)))) return false;
      for (const s of this.regroupStatements(row)) await tx.execute(s);
      return true;
    });
  }

  replaceStatement(row: NewMessageRow, mode: 'replace' | 'debounce', now: Now): Statement {
    const b = new StatementBinder(this.on.d);
    // Bound in the order the placeholders appear (MySQL and SQLite number '?' by position).
    const opt = (v: string | null) => (v === null ? 'NULL' : b.bind(v));
    const content =
      `PAYLOAD_ENCODING = ${b.bind(row.encoding)}, PAYLOAD_TYPE_NAMESPACE = ${b.bind(row.namespace ?? '')}, ` +
      `PAYLOAD_TYPE_NAME = ${b.bind(row.name)}, PAYLOAD_TYPE_REVISION = ${opt(row.revision)}, PAYLOAD = ${b.bind(row.payload)}`;
    const inserted = this.on.now(b, now);
    const ttl = opt(row.ttl);
    const expiration =
      row.expiration !== null
        ? this.on.t.at(b, row.expiration)
        : row.ttlMs !== null
          ? this.on.nowPlus(b, now, row.ttlMs)
          : 'NULL';
    const next = this.nextRetry(b, row, mode, now);
    const priority = this.on.priority ? `, PRIORITY = ${Math.trunc(row.priority ?? 0)}` : '';
    return b.statement(
      `UPDATE ${this.on.table} SET ${content}, INSERTED = ${inserted}, TTL_DURATION = ${ttl}, ` +
        `EXPIRATION = ${expiration}, RETRIES = 0, ERROR = NULL, NEXT_RETRY = ${next}${priority} WHERE ID = ${b.bind(row.id)}`,
    );
  }

  /** NEXT_RETRY after the replace (see the class). */
  private nextRetry(b: StatementBinder, row: NewMessageRow, mode: 'replace' | 'debounce', now: Now): string {
    const paused = `NEXT_RETRY >= ${this.on.farFuture()}`;
    const scheduled = row.notBefore !== undefined || row.delayMs !== undefined;
    if (mode === 'debounce' || scheduled) {
      const notBefore =
        row.notBefore !== undefined
          ? this.on.t.at(b, row.notBefore)
          : row.delayMs !== undefined
            ? this.on.nowPlus(b, now, row.delayMs)
            : 'NULL';
      return `CASE WHEN ${paused} THEN NEXT_RETRY ELSE ${notBefore} END`;
    }
    return `CASE WHEN ${paused} THEN NEXT_RETRY WHEN NEXT_RETRY > ${this.on.now(b, now)} THEN ${this.nextRetryPlusOneMs()} ELSE NEXT_RETRY END`;
  }

  /** NEXT_RETRY one millisecond later, in the column's type. */
  private nextRetryPlusOneMs(): string {
    if (this.on.t.millis) return this.on.t.fromMillis(`(${this.on.t.millis('NEXT_RETRY')} + 1)`);
    if (this.on.d.name === 'postgres') return `NEXT_RETRY + INTERVAL '1 millisecond'`;
    return 'NEXT_RETRY + INTERVAL 1000 MICROSECOND';
  }

  /** The group row of a replaced message: its new group, with the message's new INSERTED. */
  private regroupStatements(row: NewMessageRow): Statement[] {
    const gone = new StatementBinder(this.on.d);
    const drop = gone.statement(`DELETE FROM ${this.on.groupTable} WHERE ID = ${gone.bind(row.id)}`);
    const b = new StatementBinder(this.on.d);
    const add = b.statement(
      `INSERT INTO ${this.on.groupTable} (ID, GROUP_KEY, INSERTED) SELECT ID, ${b.bind(row.group!)}, INSERTED ` +
        `FROM ${this.on.table} WHERE ID = ${b.bind(row.id)}`,
    );
    return [drop, add];
  }
}
