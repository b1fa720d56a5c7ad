import {
  type ColumnType,
  type SqlClient,
  StatementBinder,
  statement,
  type Statement,
} from '@holdfast/core/kit';
import type { CorMessageShared } from './cor-message.shared';
import { CorMessageReplace } from './cor-message.replace';
import type { NewMessageRow, Now } from './cor-message.rows';
import { messageRowValues, notBeforeValue, priorityValue } from './cor-message.row-values';
import {
  MAX_ID_LENGTH,
  MAX_TTL_LENGTH,
  MAX_TYPE_NAME_LENGTH,
  MAX_TYPE_NAMESPACE_LENGTH,
  MAX_TYPE_REVISION_LENGTH,
} from './cor-message.table';
import { MAX_GROUP_KEY_LENGTH as MAX_GROUP_KEY } from './inbox-group.table';
import { keyedRows, upsertClause } from './inbox-sql.dialect';

const varchar = (length: number): ColumnType => ({ kind: 'varchar', length });

/** The columns of an insert from arrays, each bound as one array, in this order. */
const ARRAY_COLUMNS: readonly { name: string; type: ColumnType; value: (r: NewMessageRow) => unknown }[] = [
  { name: 'id', type: varchar(MAX_ID_LENGTH), value: (r) => r.id },
  { name: 'enc', type: varchar(64), value: (r) => r.encoding },
  { name: 'ns', type: varchar(MAX_TYPE_NAMESPACE_LENGTH), value: (r) => r.namespace ?? '' },
  { name: 'name', type: varchar(MAX_TYPE_NAME_LENGTH), value: (r) => r.name },
  { name: 'rev', type: varchar(MAX_TYPE_REVISION_LENGTH), value: (r) => r.revision },
  { name: 'payload', type: { kind: 'blob' }, value: (r) => r.payload },
  { name: 'ttl', type: varchar(MAX_TTL_LENGTH), value: (r) => r.ttl },
  { name: 'exp', type: { kind: 'bigint' }, value: (r) => r.expiration },
  { name: 'ttlms', type: { kind: 'bigint' }, value: (r) => r.ttlMs },
];

/** The scheduling columns' arrays, bound only when a row of the insert is scheduled. */
const SCHEDULE_COLUMNS: typeof ARRAY_COLUMNS = [
  { name: 'nb', type: { kind: 'bigint' }, value: (r) => r.notBefore ?? null },
  { name: 'dly', type: { kind: 'bigint' }, value: (r) => r.delayMs ?? null },
];

/** PRIORITY's array, bound only when priorities are on. */
const PRIORITY_ARRAY: (typeof ARRAY_COLUMNS)[number] = {
  name: 'prio',
  type: { kind: 'int' },
  value: (r) => r.priority ?? 0,
};

const scheduled = (r: NewMessageRow) => r.notBefore !== undefined || r.delayMs !== undefined;

/** TRACE_CONTEXT's array, bound only when the inbox carries the accepting context. */
const TRACE_CONTEXT_COLUMNS: typeof ARRAY_COLUMNS = [
  { name: 'tc', type: { kind: 'text' }, value: (r) => r.traceContext ?? null },
];

/** An INSERT of messages being built: its text so far and its binder (see runInsert). */
interface PendingInsert {
  text: string;
  binder: StatementBinder;
  /** How many messages it inserts. */
  rows: number;
  /** PostgreSQL: the messages whose group rows the same statement inserts. */
  groups?: readonly NewMessageRow[];
}

/** Accepting messages: which ids exist, and the inserts (with their group rows). */
export class CorMessageAccept {
  /** Replace or debounce by id. */
  private readonly replacing: CorMessageReplace;

  constructor(private readonly on: CorMessageShared) {
    this.replacing = new CorMessageReplace(on);
  }

  /**
   * The same statements through another client (a caller's transaction), on the same table facts
   * (its layout, group table, NOTIFY channel).
   */
  through(sql: SqlClient): CorMessageAccept {
    return new CorMessageAccept(this.on.through(sql));
  }

  /** `, TRACE_CONTEXT` in an insert's column list when the inbox carries the accepting context. */
  private get traceContextColumn(): string {
    return this.on.traceContext ? ', TRACE_CONTEXT' : '';
  }

  /** `, PRIORITY` in an insert's column list when priorities are on. */
  private get priorityColumn(): string {
    return this.on.priority ? ', PRIORITY' : '';
  }

  /** Replace or debounce by id (see CorMessageReplace): true when the id existed and was replaced. */
  replace(row: NewMessageRow, mode: 'replace' | 'debounce', now: Now): Promise<boolean> {
    return this.replacing.replace(row, mode, now);
  }

  /** The ids among `ids` that already exist. */
  async existingIds(ids: readonly string[]): Promise<Set<string>> {
    if (!ids.length) return new Set();
    const s = this.existingIdsStatement(ids);
    const rows = await this.on.sql.query<{ id: string }>(s);
    return new Set(rows.map((r) => r.id));
  }

  existingIdsStatement(ids: readonly string[]): Statement {
    const b = new StatementBinder(this.on.d);
    return b.statement(`SELECT ID AS id FROM ${this.on.table} WHERE ID IN (${b.list(ids)})`);
  }

  /**
   * One multi-row INSERT; INSERTED is the database clock of this statement. A duplicate id makes
   * the whole statement fail (no conflict clause: its affected-row count is ambiguous on MariaDB),
   * and the caller sorts that out. Every column gets a value: the seed's DDL has no defaults.
   */
  async insert(rows: readonly NewMessageRow[], now: Now): Promise<number> {
    const grouped = this.on.groupTable !== undefined && rows.some((r) => r.group !== undefined);
    if (!grouped) return this.insertRows(this.on.sql, rows, now);
    // The messages and their groups commit together: a message is never seen without its group.
    // Where the database takes arrays (PostgreSQL): in one statement (see runGroupedInsert);
    // elsewhere in one transaction.
    if (this.on.d.arraySource) return this.insertRows(this.on.sql, rows, now, rows);
    // Elsewhere INSERTED is the database clock read once in the transaction and bound into both
    // inserts: the group rows never read COR_MESSAGE (on InnoDB an INSERT … SELECT locks what it
    // reads, and parallel chunks of one acceptAll deadlocked on it).
    return this.on.sql.transaction(async (tx) => {
      const clock = statement(`SELECT ${this.on.t.read(this.on.t.now)} AS db_now`);
      const at = now ?? this.on.t.toMillis((await tx.query<{ db_now: unknown }>(clock))[0].db_now);
      const n = await this.insertRows(tx, rows, at);
      await this.insertGroups(tx, rows, at);
      return n;
    });
  }

  /**
   * The group rows of messages just inserted (same transaction), with the INSERTED they were
   * inserted with. A group row left behind by a message deleted from outside (a Java client) is
   * overwritten (MySQL/MariaDB, SQLite; other dialects delete it first).
   */
  private async insertGroups(tx: SqlClient, rows: readonly NewMessageRow[], at: number): Promise<void> {
    const grouped = rows.filter((r) => r.group !== undefined);
    if (!grouped.length) return;
    const conflict = upsertClause(this.on.d, ['ID'], ['GROUP_KEY', 'INSERTED']);
    if (conflict === undefined) {
      const gone = this.deleteGroupRowsStatement(grouped.map((r) => r.id));
      await tx.execute(gone);
    }
    const s = this.insertGroupsStatement(grouped, at, conflict);
    await tx.execute(s);
  }

  /** The group rows of these ids (before their insert where the dialect has no upsert). */
  private deleteGroupRowsStatement(ids: readonly string[]): Statement {
    const b = new StatementBinder(this.on.d);
    const gone = keyedRows(this.on.d, b, this.on.groupTable!, 'ID', ids);
    return b.statement(`DELETE ${gone.deleteFrom} WHERE ${gone.where}1 = 1`);
  }

  private insertGroupsStatement(grouped: readonly NewMessageRow[], at: number, conflict?: string): Statement {
    const b = new StatementBinder(this.on.d);
    const values = grouped.map((r) => `(${b.bind(r.id)}, ${b.bind(r.group!)}, ${this.on.t.at(b, at)})`);
    return b.statement(
      `INSERT INTO ${this.on.groupTable} (ID, GROUP_KEY, INSERTED) VALUES ${values.join(', ')}${conflict ? ` ${conflict}` : ''}`,
    );
  }

  private async insertRows(
    client: SqlClient,
    rows: readonly NewMessageRow[],
    now: Now,
    groups?: readonly NewMessageRow[],
  ): Promise<number> {
    if (rows.length > 1 && this.on.d.arraySource) return this.insertFromArrays(client, rows, now, groups);
    const b = new StatementBinder(this.on.d);
    // Bound in the order the placeholders appear: MySQL and SQLite number '?' by position.
    const values = rows.map((r) => {
      const id = b.bind(r.id);
      const v = messageRowValues(this.on, b, r, now);
      // NEXT_RETRY: the seed's "not before" (deliverAt, or INSERTED + delay); NULL is due now.
      const notBefore = notBeforeValue(this.on, b, r, now);
      const traceContext = this.on.traceContext
        ? `, ${(r.traceContext ?? null) === null ? 'NULL' : b.bind(r.traceContext)}`
        : '';
      const priority = this.on.priority ? `, ${priorityValue(r)}` : '';
      return (
        `(${id}, ${v.encoding}, ${v.namespace}, ${v.name}, ${v.revision}, ${v.payload}, ${v.inserted}, ` +
        `${v.ttl}, ${v.expiration}, 0, ${notBefore}, NULL${traceContext}${priority})`
      );
    });
    return this.runInsert(client, {
      text:
        `INSERT INTO ${this.on.table} (ID, PAYLOAD_ENCODING, PAYLOAD_TYPE_NAMESPACE, PAYLOAD_TYPE_NAME, PAYLOAD_TYPE_REVISION, ` +
        `PAYLOAD, INSERTED, TTL_DURATION, EXPIRATION, RETRIES, NEXT_RETRY, ERROR${this.traceContextColumn}${this.priorityColumn}) VALUES ${values.join(', ')}`,
      binder: b,
      rows: rows.length,
      groups,
    });
  }

  /**
   * Runs an INSERT; with `notifyChannel`, as the data-modifying part of one statement that also
   * calls pg_notify once: the notification belongs to the insert's transaction, so listeners hear
   * it when (and only if) the rows are committed, once per statement whatever the row count.
   */
  private async runInsert(client: SqlClient, insert: PendingInsert): Promise<number> {
    const s = this.insertStatement(insert);
    // One message (an accept): the same text every time, kept planned per connection on PostgreSQL.
    const prepared = { prepared: !insert.groups && insert.rows === 1 };
    if (insert.groups || this.on.notifyChannel !== undefined) await client.query(s, prepared);
    else return client.execute(s, prepared);
    return insert.rows;
  }

  /** The insert as sent: alone, or wrapped with its group rows and its NOTIFY (see runInsert). */
  private insertStatement({ text, binder: b, groups }: PendingInsert): Statement {
    if (groups) return this.groupedInsertStatement(text, b, groups);
    if (this.on.notifyChannel === undefined) return b.statement(text);
    const channel = b.bind(this.on.notifyChannel);
    return b.statement(`WITH hf_inserted AS (${text}) SELECT pg_notify(${channel}, '') AS notified`);
  }

  /**
   * PostgreSQL with groups: the messages and their group rows in one statement (atomic without a
   * transaction of its own, one round trip), the group rows joined to the inserted ones by the
   * RETURNING of the insert (their INSERTED exactly), plus the NOTIFY when it is on. A group row
   * left behind by a message deleted from outside is overwritten.
   */
  private groupedInsertStatement(
    insert: string,
    b: StatementBinder,
    groups: readonly NewMessageRow[],
  ): Statement {
    const grouped = groups.filter((r) => r.group !== undefined);
    const source = this.on.d.arraySource!([
      {
        name: 'id',
        type: varchar(MAX_ID_LENGTH),
        placeholder: b.bind(grouped.map((r) => r.id)),
      },
      {
        name: 'grp',
        type: varchar(MAX_GROUP_KEY),
        placeholder: b.bind(grouped.map((r) => r.group!)),
      },
    ]);
    const tail =
      this.on.notifyChannel === undefined
        ? 'SELECT 1 AS done'
        : `SELECT pg_notify(${b.bind(this.on.notifyChannel)}, '') AS notified`;
    return b.statement(
      `WITH hf_inserted AS (${insert} RETURNING ID, INSERTED), hf_grouped AS (` +
        `INSERT INTO ${this.on.groupTable} (ID, GROUP_KEY, INSERTED) SELECT u.id, u.grp, i.INSERTED ` +
        `FROM hf_inserted i JOIN ${source} ON u.id = i.ID ` +
        `${upsertClause(this.on.d, ['ID'], ['GROUP_KEY', 'INSERTED'])}) ${tail}`,
    );
  }

  /**
   * The same insert where the database takes arrays (PostgreSQL): one bound array per column and
   * `INSERT ... SELECT ... FROM UNNEST(...)`, nine parameters for any number of rows, instead of a
   * VALUES list whose thousands of parameters cost more to parse and bind than the rows themselves.
   */
  private insertFromArrays(
    client: SqlClient,
    rows: readonly NewMessageRow[],
    now: Now,
    groups?: readonly NewMessageRow[],
  ): Promise<number> {
    const b = new StatementBinder(this.on.d);
    const withSchedule = rows.some(scheduled);
    const columns = withSchedule ? [...ARRAY_COLUMNS, ...SCHEDULE_COLUMNS] : [...ARRAY_COLUMNS];
    if (this.on.traceContext) columns.push(...TRACE_CONTEXT_COLUMNS);
    if (this.on.priority) columns.push(PRIORITY_ARRAY);
    const source = this.on.d.arraySource!(
      columns.map(({ name, type, value }) => ({ name, type, placeholder: b.bind(rows.map(value)) })),
    );
    const inserted = this.on.now(b, now);
    // EXPIRATION: absolute epoch ms, or INSERTED + the TTL (one clock value per statement).
    const expiration =
      `CASE WHEN u.exp IS NOT NULL THEN ${this.on.t.fromMillis('u.exp')} ` +
      `WHEN u.ttlms IS NOT NULL THEN i.ins + u.ttlms * INTERVAL '1 millisecond' END`;
    // NEXT_RETRY: deliverAt, or INSERTED + delay; NULL (due now) when no row is scheduled.
    const notBefore = withSchedule
      ? `CASE WHEN u.nb IS NOT NULL THEN ${this.on.t.fromMillis('u.nb')} ` +
        `WHEN u.dly IS NOT NULL THEN i.ins + u.dly * INTERVAL '1 millisecond' END`
      : 'NULL';
    return this.runInsert(client, {
      text:
        `INSERT INTO ${this.on.table} (ID, PAYLOAD_ENCODING, PAYLOAD_TYPE_NAMESPACE, PAYLOAD_TYPE_NAME, PAYLOAD_TYPE_REVISION, ` +
        `PAYLOAD, INSERTED, TTL_DURATION, EXPIRATION, RETRIES, NEXT_RETRY, ERROR${this.traceContextColumn}${this.priorityColumn}) ` +
        `SELECT u.id, u.enc, u.ns, u.name, u.rev, u.payload, i.ins, u.ttl, ${expiration}, 0, ${notBefore}, NULL` +
        `${this.on.traceContext ? ', u.tc' : ''}${this.on.priority ? ', u.prio' : ''} ` +
        `FROM (SELECT ${inserted} AS ins) i CROSS JOIN ${source}`,
      binder: b,
      rows: rows.length,
      groups,
    });
  }
}
