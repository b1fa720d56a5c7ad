import { type SqlClient, StatementBinder, type Statement } from '@holdfast/core/kit';
import type { CorMessageShared } from './cor-message.shared';
import type { NewMessageRow, Now } from './cor-message.rows';
import { messageRowValues, notBeforeValue, priorityValue } from './cor-message.row-values';

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
      return this.run(this.on.sql, row, mode, now);
    return this.on.sql.transaction(async (tx: SqlClient) => {
      if (!(await this.run(tx, row, mode, now))) return false;
      for (const s of this.regroupStatements(row)) await tx.execute(s);
      return true;
    });
  }

  /**
   * The UPDATE; with a NOTIFY channel (PostgreSQL), as the data-modifying part of one statement
   * that also notifies when a row was replaced, as an insert does: the other nodes hear of the
   * new content (due now, or at its new time) when the transaction commits.
   */
  private async run(
    sql: SqlClient,
    row: NewMessageRow,
    mode: 'replace' | 'debounce',
    now: Now,
  ): Promise<boolean> {
    const b = new StatementBinder(this.on.d);
    const update = this.replaceText(b, row, mode, now);
    if (this.on.notifyChannel === undefined) return (await sql.execute(b.statement(update))) > 0;
    // The channel is bound after the UPDATE's values, in the order the placeholders appear.
    const channel = b.bind(this.on.notifyChannel);
    const text = `WITH hf_replaced AS (${update} RETURNING ID) SELECT pg_notify(${channel}, '') AS notified FROM hf_replaced`;
    return (await sql.query(b.statement(text))).length > 0;
  }

  replaceStatement(row: NewMessageRow, mode: 'replace' | 'debounce', now: Now): Statement {
    const b = new StatementBinder(this.on.d);
    return b.statement(this.replaceText(b, row, mode, now));
  }

  private replaceText(
    b: StatementBinder,
    row: NewMessageRow,
    mode: 'replace' | 'debounce',
    now: Now,
  ): string {
    // Bound in the order the placeholders appear (MySQL and SQLite number '?' by position).
    const v = messageRowValues(this.on, b, row, now);
    const content =
      `PAYLOAD_ENCODING = ${v.encoding}, PAYLOAD_TYPE_NAMESPACE = ${v.namespace}, ` +
      `PAYLOAD_TYPE_NAME = ${v.name}, PAYLOAD_TYPE_REVISION = ${v.revision}, PAYLOAD = ${v.payload}`;
    const next = this.nextRetry(b, row, mode, now);
    const priority = this.on.priority ? `, PRIORITY = ${priorityValue(row)}` : '';
    return (
      `UPDATE ${this.on.table} SET ${content}, INSERTED = ${v.inserted}, TTL_DURATION = ${v.ttl}, ` +
      `EXPIRATION = ${v.expiration}, RETRIES = 0, ERROR = NULL, NEXT_RETRY = ${next}${priority} WHERE ID = ${b.bind(row.id)}`
    );
  }

  /** NEXT_RETRY after the replace (see the class). */
  private nextRetry(b: StatementBinder, row: NewMessageRow, mode: 'replace' | 'debounce', now: Now): string {
    const paused = `NEXT_RETRY >= ${this.on.farFuture()}`;
    const scheduled = row.notBefore !== undefined || row.delayMs !== undefined;
    if (mode === 'debounce' || scheduled)
      return `CASE WHEN ${paused} THEN NEXT_RETRY ELSE ${notBeforeValue(this.on, b, row, now)} END`;
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
