import {
  indexName,
  SqlClient,
  tableName,
  toNumber,
  type ColumnType,
  type TimestampSql,
} from '@holdfast/core';
import { PauseUnsupportedError } from '../errors';
import type { MessageStatus } from '../inbox-message';
import { Binder } from './binder';
import { COR_MESSAGE_ORDER_INDEX, COR_MESSAGE_TABLE } from './cor-message.table';
import { FAR_FUTURE } from './next-retry';
import { MAX_GROUP_KEY_LENGTH as MAX_GROUP_KEY } from './inbox-group.table';

/** A row to insert: everything already validated and encoded. */
export interface NewMessageRow {
  id: string;
  encoding: string;
  namespace: string | null;
  name: string;
  revision: string | null;
  payload: Buffer;
  ttl: string | null;
  /** Relative expiry (INSERTED + ttlMs) … */
  ttlMs: number | null;
  /** … or an absolute one in epoch ms. */
  expiration: number | null;
  /** Its group (`groupBy`), written to `<prefix>HOLDFAST_INBOX_GROUP` in the same transaction. */
  group?: string;
}

/** A row as read back (BIGINTs converted). */
export interface MessageRow {
  id: string;
  encoding: string;
  namespace: string | null;
  name: string;
  revision: string | null;
  payload?: unknown;
  inserted: number;
  ttl: string | null;
  expiration: number | null;
  retries: number;
  nextRetry: number | null;
  error: string | null;
  /** Its group in `<prefix>HOLDFAST_INBOX_GROUP` (grouped claims only; undefined: no group). */
  group?: string;
}

interface RawRow {
  id: string;
  payload_encoding: string;
  ns: string | null;
  name: string;
  revision: string | null;
  payload?: unknown;
  inserted_ms: unknown;
  ttl: string | null;
  expiration_ms: unknown;
  retries: unknown;
  next_retry_ms: unknown;
  error: string | null;
  group_key?: string | null;
}

/** A claim this node holds: the row and the lease end it wrote into NEXT_RETRY (epoch ms). */
export interface Lease {
  id: string;
  until: number;
}

/** `now` is either a bound value (an injected clock) or undefined: the database clock inline. */
export type Now = number | undefined;

/**
 * Every statement on `<prefix>COR_MESSAGE`, built from the dialect's pieces. Times are the
 * seed's timestamp columns, compared with the database clock inside each statement unless a test
 * clock supplies `now` (epoch ms, bound). Rows come back with times in epoch ms.
 */
export class CorMessageQueries {
  readonly table: string;
  private readonly d;
  private t: TimestampSql;
  /** The delivery-order index (MySQL/MariaDB force it when it exists). */
  private readonly orderIndex: string;
  private hasOrderIndex = false;
  /** Due/parked boundary: RETRIES at or above it (with no NEXT_RETRY) is parked. */
  private readonly maxRetries: number;
  /**
   * PostgreSQL: the channel each insert notifies, in its own statement (so in its own
   * transaction: one notification per insert statement, sent when it commits). Unset: no NOTIFY.
   */
  notifyChannel?: string;
  /**
   * `<prefix>HOLDFAST_INBOX_GROUP` when `groupBy` is set: accepts write each message's group
   * there, claims take only messages whose group has no earlier message waiting elsewhere
   * (strict order per group), deletes remove the group rows with their messages.
   */
  groupTable?: string;

  constructor(
    readonly sql: SqlClient,
    prefix: string,
    maxRetries = 5,
  ) {
    this.table = tableName(prefix, COR_MESSAGE_TABLE.name);
    this.d = sql.dialect;
    this.t = this.d.timestampSql();
    this.maxRetries = Math.max(1, maxRetries);
    this.orderIndex = indexName(prefix, COR_MESSAGE_ORDER_INDEX);
  }

  /**
   * Reads the live type of the time columns where the dialect has two accepted forms
   * (MySQL/MariaDB `DATETIME(3)` or `TIMESTAMP`). Call once the table exists.
   */
  async detectLayout(): Promise<void> {
    if (this.d.name !== 'mysql' && this.d.name !== 'mariadb') return;
    const dot = this.table.lastIndexOf('.');
    const name = dot < 0 ? this.table : this.table.slice(dot + 1);
    const schema = dot < 0 ? undefined : this.table.slice(0, dot);
    const rows = await this.sql.query<{ t: string }>(
      `SELECT DATA_TYPE AS t FROM information_schema.columns WHERE table_name = ? AND column_name = 'NEXT_RETRY' ` +
        `AND table_schema = ${schema ? '?' : 'DATABASE()'}`,
      schema ? [name, schema] : [name],
    );
    const type = String(rows[0]?.t ?? 'datetime').toLowerCase();
    this.t = this.d.timestampSql(type === 'timestamp' ? 'timestamp' : 'datetime');
    const indexes = await this.sql.query(
      `SELECT 1 FROM information_schema.statistics WHERE table_name = ? AND index_name = ? ` +
        `AND table_schema = ${schema ? '?' : 'DATABASE()'}`,
      schema ? [name, this.orderIndex, schema] : [name, this.orderIndex],
    );
    this.hasOrderIndex = indexes.length > 0;
  }

  /** False where NEXT_RETRY cannot hold FAR_FUTURE, so messages cannot be paused. */
  get canPause(): boolean {
    return FAR_FUTURE <= this.t.maxMillis;
  }

  private now(b: Binder, now: Now): string {
    return now === undefined ? this.t.now : this.t.at(b, now);
  }

  /** now + delta: the database clock plus a bound delta, or the bound test clock plus delta. */
  private nowPlus(b: Binder, now: Now, delta: number): string {
    return now === undefined ? this.t.nowPlus(b, delta) : this.t.at(b, now + delta);
  }

  /** FAR_FUTURE as a constant of the column's type (never a parameter). */
  private farFuture(): string {
    return this.t.literal(FAR_FUTURE);
  }

  private columns(withPayload: boolean): string {
    const t = this.t;
    return [
      'ID AS id',
      'PAYLOAD_ENCODING AS payload_encoding',
      'PAYLOAD_TYPE_NAMESPACE AS ns',
      'PAYLOAD_TYPE_NAME AS name',
      'PAYLOAD_TYPE_REVISION AS revision',
      ...(withPayload ? ['PAYLOAD AS payload'] : []),
      // Aliases unlike the column names: ORDER BY INSERTED must mean the column (and its index).
      `${t.read('INSERTED')} AS inserted_ms`,
      'TTL_DURATION AS ttl',
      `${t.read('EXPIRATION')} AS expiration_ms`,
      'RETRIES AS retries',
      `${t.read('NEXT_RETRY')} AS next_retry_ms`,
      'ERROR AS error',
    ].join(', ');
  }

  private read(raw: RawRow): MessageRow {
    const time = (v: unknown) => (v === null || v === undefined ? null : this.t.toMillis(v));
    return {
      id: raw.id,
      encoding: raw.payload_encoding,
      // The seed's PAYLOAD_TYPE_NAMESPACE is NOT NULL: a type without one is stored as ''.
      namespace: raw.ns === null || raw.ns === undefined || raw.ns === '' ? null : raw.ns,
      name: raw.name,
      revision: raw.revision ?? null,
      payload: raw.payload,
      inserted: this.t.toMillis(raw.inserted_ms),
      ttl: raw.ttl ?? null,
      expiration: time(raw.expiration_ms),
      retries: toNumber(raw.retries),
      nextRetry: time(raw.next_retry_ms),
      error: raw.error ?? null,
      ...(raw.group_key !== null && raw.group_key !== undefined ? { group: raw.group_key } : {}),
    };
  }

  /** SQL conditions per status; `n()` binds now once more (MySQL and SQLite number '?' by position). */
  private statusCondition(status: MessageStatus, n: () => string): string {
    const notExpired = () => `(EXPIRATION IS NULL OR EXPIRATION > ${n()})`;
    const max = Math.trunc(this.maxRetries);
    switch (status) {
      case 'expired':
        return `(EXPIRATION IS NOT NULL AND EXPIRATION <= ${n()})`;
      case 'due':
        return `((NEXT_RETRY IS NULL AND RETRIES < ${max}) OR NEXT_RETRY <= ${n()}) AND ${notExpired()}`;
      case 'retrying':
        return `(NEXT_RETRY > ${n()} AND NEXT_RETRY < ${this.farFuture()}) AND ${notExpired()}`;
      case 'paused':
        return `NEXT_RETRY >= ${this.farFuture()} AND ${notExpired()}`;
      case 'parked':
        return `(NEXT_RETRY IS NULL AND RETRIES >= ${max}) AND ${notExpired()}`;
    }
  }

  // ---- accept ------------------------------------------------------------------------------

  /** The ids among `ids` that already exist. */
  async existingIds(ids: readonly string[]): Promise<Set<string>> {
    if (!ids.length) return new Set();
    const b = new Binder(this.d);
    const rows = await this.sql.query<{ id: string }>(
      `SELECT ID AS id FROM ${this.table} WHERE ID IN (${b.list(ids)})`,
      b.params,
    );
    return new Set(rows.map((r) => r.id));
  }

  /**
   * One multi-row INSERT; INSERTED is the database clock of this statement. A duplicate id makes
   * the whole statement fail (no conflict clause: its affected-row count is ambiguous on MariaDB),
   * and the caller sorts that out. Every column gets a value: the seed's DDL has no defaults.
   */
  async insert(rows: readonly NewMessageRow[], now: Now): Promise<number> {
    const grouped = this.groupTable !== undefined && rows.some((r) => r.group !== undefined);
    if (!grouped) return this.insertRows(this.sql, rows, now);
    // The messages and their groups commit together: a message is never seen without its group.
    // PostgreSQL: in one statement (see runInsert); elsewhere in one transaction.
    if (this.d.arraySource) return this.insertRows(this.sql, rows, now, rows);
    // Elsewhere INSERTED is the database clock read once in the transaction and bound into both
    // inserts: the group rows never read COR_MESSAGE (on InnoDB an INSERT … SELECT locks what it
    // reads, and parallel chunks of one acceptAll deadlocked on it).
    return this.sql.transaction(async (tx) => {
      const at =
        now ??
        this.t.toMillis(
          (await tx.query<{ db_now: unknown }>(`SELECT ${this.t.read(this.t.now)} AS db_now`))[0].db_now,
        );
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
    const conflict = this.d.upsertClause(['ID'], ['GROUP_KEY', 'INSERTED']);
    if (conflict === undefined) {
      const d = new Binder(this.d);
      const gone = this.keyedIn(
        d,
        this.groupTable!,
        grouped.map((r) => r.id),
      );
      await tx.execute(`DELETE ${gone.deleteFrom} WHERE ${gone.where}1 = 1`, d.params);
    }
    const b = new Binder(this.d);
    const values = grouped.map((r) => `(${b.bind(r.id)}, ${b.bind(r.group!)}, ${this.t.at(b, at)})`);
    await tx.execute(
      `INSERT INTO ${this.groupTable} (ID, GROUP_KEY, INSERTED) VALUES ${values.join(', ')}${conflict ? ` ${conflict}` : ''}`,
      b.params,
    );
  }

  private async insertRows(
    client: SqlClient,
    rows: readonly NewMessageRow[],
    now: Now,
    groups?: readonly NewMessageRow[],
  ): Promise<number> {
    if (rows.length > 1 && this.d.arraySource) return this.insertFromArrays(client, rows, now, groups);
    const b = new Binder(this.d);
    // Bound in the order the placeholders appear: MySQL and SQLite number '?' by position.
    const values = rows.map((r) => {
      // NULLs as literals: fewer parameters make large inserts noticeably cheaper to parse.
      const opt = (v: string | null) => (v === null ? 'NULL' : b.bind(v));
      const head = `${b.bind(r.id)}, ${b.bind(r.encoding)}, ${b.bind(r.namespace ?? '')}, ${b.bind(r.name)}, ${opt(r.revision)}, ${b.bind(r.payload)}`;
      const inserted = this.now(b, now);
      const ttl = opt(r.ttl);
      const expiration =
        r.expiration !== null
          ? this.t.at(b, r.expiration)
          : r.ttlMs !== null
            ? this.nowPlus(b, now, r.ttlMs)
            : 'NULL';
      return `(${head}, ${inserted}, ${ttl}, ${expiration}, 0, NULL, NULL)`;
    });
    return this.runInsert(
      client,
      `INSERT INTO ${this.table} (ID, PAYLOAD_ENCODING, PAYLOAD_TYPE_NAMESPACE, PAYLOAD_TYPE_NAME, PAYLOAD_TYPE_REVISION, ` +
        `PAYLOAD, INSERTED, TTL_DURATION, EXPIRATION, RETRIES, NEXT_RETRY, ERROR) VALUES ${values.join(', ')}`,
      b,
      rows.length,
      groups,
    );
  }

  /**
   * Runs an INSERT; with `notifyChannel`, as the data-modifying part of one statement that also
   * calls pg_notify once: the notification belongs to the insert's transaction, so listeners hear
   * it when (and only if) the rows are committed, once per statement whatever the row count.
   */
  private async runInsert(
    client: SqlClient,
    insert: string,
    b: Binder,
    rows: number,
    groups?: readonly NewMessageRow[],
  ): Promise<number> {
    if (groups) return this.runGroupedInsert(client, insert, b, rows, groups);
    if (this.notifyChannel === undefined) return client.execute(insert, b.params);
    const channel = b.bind(this.notifyChannel);
    await client.query(
      `WITH hf_inserted AS (${insert}) SELECT pg_notify(${channel}, '') AS notified`,
      b.params,
    );
    return rows;
  }

  /**
   * The same insert where the database takes arrays (PostgreSQL): one bound array per column and
   * `INSERT ... SELECT ... FROM UNNEST(...)`, nine parameters for any number of rows, instead of a
   * VALUES list whose thousands of parameters cost more to parse and bind than the rows themselves.
   */
  /**
   * PostgreSQL with groups: the messages and their group rows in one statement (atomic without a
   * transaction of its own, one round trip), the group rows joined to the inserted ones by the
   * RETURNING of the insert (their INSERTED exactly), plus the NOTIFY when it is on. A group row
   * left behind by a message deleted from outside is overwritten.
   */
  private async runGroupedInsert(
    client: SqlClient,
    insert: string,
    b: Binder,
    rows: number,
    groups: readonly NewMessageRow[],
  ): Promise<number> {
    const grouped = groups.filter((r) => r.group !== undefined);
    const text = (length: number): ColumnType => ({ kind: 'varchar', length });
    const source = this.d.arraySource!([
      {
        name: 'id',
        type: text(64),
        placeholder: b.bind(grouped.map((r) => r.id)),
      },
      {
        name: 'grp',
        type: text(MAX_GROUP_KEY),
        placeholder: b.bind(grouped.map((r) => r.group!)),
      },
    ]);
    const tail =
      this.notifyChannel === undefined
        ? 'SELECT 1 AS done'
        : `SELECT pg_notify(${b.bind(this.notifyChannel)}, '') AS notified`;
    await client.query(
      `WITH hf_inserted AS (${insert} RETURNING ID, INSERTED), hf_grouped AS (` +
        `INSERT INTO ${this.groupTable} (ID, GROUP_KEY, INSERTED) SELECT u.id, u.grp, i.INSERTED ` +
        `FROM hf_inserted i JOIN ${source} ON u.id = i.ID ` +
        `${this.d.upsertClause(['ID'], ['GROUP_KEY', 'INSERTED'])}) ${tail}`,
      b.params,
    );
    return rows;
  }

  private insertFromArrays(
    client: SqlClient,
    rows: readonly NewMessageRow[],
    now: Now,
    groups?: readonly NewMessageRow[],
  ): Promise<number> {
    const b = new Binder(this.d);
    const text = (length: number): ColumnType => ({ kind: 'varchar', length });
    const column = (name: string, type: ColumnType, values: unknown[]) => ({
      name,
      type,
      placeholder: b.bind(values),
    });
    const source = this.d.arraySource!([
      column(
        'id',
        text(64),
        rows.map((r) => r.id),
      ),
      column(
        'enc',
        text(64),
        rows.map((r) => r.encoding),
      ),
      column(
        'ns',
        text(128),
        rows.map((r) => r.namespace ?? ''),
      ),
      column(
        'name',
        text(128),
        rows.map((r) => r.name),
      ),
      column(
        'rev',
        text(64),
        rows.map((r) => r.revision),
      ),
      column(
        'payload',
        { kind: 'blob' },
        rows.map((r) => r.payload),
      ),
      column(
        'ttl',
        text(64),
        rows.map((r) => r.ttl),
      ),
      column(
        'exp',
        { kind: 'bigint' },
        rows.map((r) => r.expiration),
      ),
      column(
        'ttlms',
        { kind: 'bigint' },
        rows.map((r) => r.ttlMs),
      ),
    ]);
    const inserted = this.now(b, now);
    // EXPIRATION: absolute epoch ms, or INSERTED + the TTL (one clock value per statement).
    const expiration =
      `CASE WHEN u.exp IS NOT NULL THEN ${this.t.fromMillis('u.exp')} ` +
      `WHEN u.ttlms IS NOT NULL THEN i.ins + u.ttlms * INTERVAL '1 millisecond' END`;
    return this.runInsert(
      client,
      `INSERT INTO ${this.table} (ID, PAYLOAD_ENCODING, PAYLOAD_TYPE_NAMESPACE, PAYLOAD_TYPE_NAME, PAYLOAD_TYPE_REVISION, ` +
        `PAYLOAD, INSERTED, TTL_DURATION, EXPIRATION, RETRIES, NEXT_RETRY, ERROR) ` +
        `SELECT u.id, u.enc, u.ns, u.name, u.rev, u.payload, i.ins, u.ttl, ${expiration}, 0, NULL, NULL ` +
        `FROM (SELECT ${inserted} AS ins) i CROSS JOIN ${source}`,
      b,
      rows.length,
      groups,
    );
  }

  // ---- delivery ----------------------------------------------------------------------------

  /**
   * Claims up to `limit` due, unexpired messages in delivery order (INSERTED, ID) and leases
   * them until `now + leaseMs` by moving NEXT_RETRY, so no other node selects them until the
   * lease ends. The claim locks only the rows it takes, whatever the table size:
   *
   * - PostgreSQL: one statement (`UPDATE … WHERE ID IN (SELECT … ORDER BY INSERTED, ID LIMIT n
   *   FOR UPDATE SKIP LOCKED) RETURNING`): rows are locked as the ordered index scan hands them
   *   out, and nothing stays open across a round trip.
   * - MySQL/MariaDB: InnoDB locks every row a locking read looks at, so the locking read never
   *   scans: a non-locking read of candidate keys walks the delivery-order index (forced), then
   *   a locking read joined with those keys (`FOR UPDATE SKIP LOCKED`) takes exactly those rows
   *   by primary key, as many as are still missing; rows that another node holds are skipped
   *   and the next candidates are tried. READ COMMITTED, so rows refused by the WHERE are not
   *   kept locked.
   * - SQLite: one `UPDATE … RETURNING` statement; the write lock lasts that statement only.
   *
   * `hold` (tests) runs inside the claim's transaction after the rows are locked.
   */
  async claim(
    limit: number,
    now: Now,
    leaseMs: number,
    hold?: (tx: SqlClient) => Promise<void>,
  ): Promise<{ rows: MessageRow[]; now: number }> {
    if (this.d.name === 'mysql' || this.d.name === 'mariadb')
      return this.claimByKeys(limit, now, leaseMs, hold);
    return this.claimInOneStatement(limit, now, leaseMs, hold);
  }

  private async claimInOneStatement(
    limit: number,
    now: Now,
    leaseMs: number,
    hold?: (tx: SqlClient) => Promise<void>,
  ): Promise<{ rows: MessageRow[]; now: number }> {
    if (this.groupTable !== undefined) return this.claimGroupedInOneStatement(limit, now, leaseMs, hold);
    // Bound in the order the placeholders appear (SQLite numbers '?' by position).
    const b = new Binder(this.d);
    const lease = this.nowPlus(b, now, leaseMs);
    const pick = this.d.limit(
      `SELECT ID FROM ${this.table} WHERE ${this.statusCondition('due', () => this.now(b, now))} ORDER BY INSERTED, ID`,
      limit,
    );
    const dbNow = `${this.t.read(this.now(b, now))} AS db_now`;
    const update =
      `UPDATE ${this.table} SET NEXT_RETRY = ${lease} WHERE ID IN (${pick}${this.d.forUpdate(this.d.supportsSkipLocked)}) ` +
      `RETURNING ${dbNow}, ${this.columns(true)}`;
    // PostgreSQL hands the rows back in delivery order as the database sorts them (collation
    // included); SQLite cannot wrap an UPDATE in a CTE, and sorts by code point like JavaScript.
    const text =
      this.d.name === 'postgres'
        ? `WITH claimed AS (${update}, INSERTED AS ord_inserted) SELECT * FROM claimed ORDER BY ord_inserted, id`
        : update;
    const run = async (sql: SqlClient) => {
      const raw = await sql.query<RawRow & { db_now: unknown }>(text, b.params);
      if (hold) await hold(sql);
      return raw;
    };
    const raw = hold ? await this.sql.transaction(run) : await run(this.sql);
    const rows = raw.map((r) => this.read(r));
    if (this.d.name !== 'postgres') rows.sort(byDeliveryOrder);
    return { rows, now: raw.length ? this.t.toMillis(raw[0].db_now) : (now ?? NaN) };
  }

  // ---- strict order per group (`<prefix>HOLDFAST_INBOX_GROUP`) ------------------------------

  /** `e` comes before `g` in delivery order (two aliases of the group table). */
  private static earlier(e: string, g: string): string {
    // A row comparison: one range of the group index (GROUP_KEY, INSERTED, ID).
    return `(${e}.INSERTED, ${e}.ID) < (${g}.INSERTED, ${g}.ID)`;
  }

  /**
   * ` AND …`: the message `m` (an alias of COR_MESSAGE) has no earlier message of its group that
   * waits for something else: leased by a node (possibly this one's other batch), waiting for a
   * retry, paused, or waiting for a handler. Earlier messages that are due do not stop it: they
   * are taken by the same claim, before it (see keptInGroups). Parked and expired messages do
   * not hold their group back, nor do messages without a group row.
   */
  private groupReady(b: Binder, now: Now, m: string): string {
    const n1 = this.now(b, now);
    const n2 = this.now(b, now);
    return (
      ` AND NOT EXISTS (SELECT 1 FROM ${this.groupTable} hf_g JOIN ${this.groupTable} hf_e ` +
      `ON hf_e.GROUP_KEY = hf_g.GROUP_KEY AND ${CorMessageQueries.earlier('hf_e', 'hf_g')} ` +
      `JOIN ${this.table} hf_em ON hf_em.ID = hf_e.ID WHERE hf_g.ID = ${m}.ID ` +
      `AND hf_em.NEXT_RETRY > ${n1} AND (hf_em.EXPIRATION IS NULL OR hf_em.EXPIRATION > ${n2})${this.perRow()})`
    );
  }

  /**
   * PostgreSQL: `OFFSET 0` keeps a NOT EXISTS a subquery run per candidate row (stopping at the
   * first match, through the group index), instead of an anti-join over the whole group table
   * that the planner otherwise chooses: 8 s for one claim on a backlog of 30,000 in 100 groups.
   */
  private perRow(): string {
    return this.d.name === 'postgres' ? ' OFFSET 0' : '';
  }

  /**
   * True for a message `hf_em` that holds back the later messages of its group: still in the
   * table, not parked, not expired.
   */
  private holdsGroup(b: Binder, now: Now): string {
    const max = Math.trunc(this.maxRetries);
    return (
      `(hf_em.NEXT_RETRY IS NOT NULL OR hf_em.RETRIES < ${max}) ` +
      `AND (hf_em.EXPIRATION IS NULL OR hf_em.EXPIRATION > ${this.now(b, now)})`
    );
  }

  /**
   * Grouped claim on PostgreSQL and SQLite. Picks due messages whose group is ready (see
   * groupReady) in delivery order, then keeps only those whose earlier group members that still
   * hold the group were all picked by this same statement: with SKIP LOCKED, a message whose
   * predecessor another node is claiming right now is left out, so a group's messages are only
   * ever held by one node, as a run from the group's head.
   */
  private async claimGroupedInOneStatement(
    limit: number,
    now: Now,
    leaseMs: number,
    hold?: (tx: SqlClient) => Promise<void>,
  ): Promise<{ rows: MessageRow[]; now: number }> {
    const b = new Binder(this.d);
    // SQLite's RETURNING sees the table by its name only (not an alias).
    const groupKey = (row: string) =>
      `(SELECT hf_k.GROUP_KEY FROM ${this.groupTable} hf_k WHERE hf_k.ID = ${row}.ID) AS group_key`;
    let text: string;
    if (this.d.name === 'postgres') {
      const due = this.statusCondition('due', () => this.now(b, now));
      const ready = this.groupReady(b, now, 'hf_m');
      const picked = this.d.limit(
        `SELECT hf_m.ID FROM ${this.table} hf_m WHERE ${due}${ready} ORDER BY INSERTED, ID`,
        limit,
      );
      const kept =
        `SELECT p.ID FROM hf_picked p WHERE NOT EXISTS (SELECT 1 FROM ${this.groupTable} hf_g ` +
        `JOIN ${this.groupTable} hf_e ON hf_e.GROUP_KEY = hf_g.GROUP_KEY AND ${CorMessageQueries.earlier('hf_e', 'hf_g')} ` +
        `JOIN ${this.table} hf_em ON hf_em.ID = hf_e.ID WHERE hf_g.ID = p.ID AND ${this.holdsGroup(b, now)} ` +
        `AND hf_e.ID NOT IN (SELECT ID FROM hf_picked)${this.perRow()})`;
      const lease = this.nowPlus(b, now, leaseMs);
      const dbNow = `${this.t.read(this.now(b, now))} AS db_now`;
      text =
        `WITH hf_picked AS (${picked}${this.d.forUpdate(true)}), hf_kept AS (${kept}), ` +
        `claimed AS (UPDATE ${this.table} AS hf_u SET NEXT_RETRY = ${lease} WHERE ID IN (SELECT ID FROM hf_kept) ` +
        `RETURNING ${dbNow}, ${this.columns(true)}, ${groupKey('hf_u')}, INSERTED AS ord_inserted) ` +
        `SELECT * FROM claimed ORDER BY ord_inserted, id`;
    } else {
      // SQLite: one writer (leader mode), and the statement holds the write lock: nothing can
      // take a predecessor between the pick and the update.
      const lease = this.nowPlus(b, now, leaseMs);
      const due = this.statusCondition('due', () => this.now(b, now));
      const ready = this.groupReady(b, now, 'hf_m');
      const pick = this.d.limit(
        `SELECT hf_m.ID FROM ${this.table} hf_m WHERE ${due}${ready} ORDER BY INSERTED, ID`,
        limit,
      );
      const dbNow = `${this.t.read(this.now(b, now))} AS db_now`;
      text =
        `UPDATE ${this.table} SET NEXT_RETRY = ${lease} WHERE ID IN (${pick}) ` +
        `RETURNING ${dbNow}, ${this.columns(true)}, ${groupKey(this.table)}`;
    }
    const run = async (sql: SqlClient) => {
      const raw = await sql.query<RawRow & { db_now: unknown }>(text, b.params);
      if (hold) await hold(sql);
      return raw;
    };
    const raw = hold ? await this.sql.transaction(run) : await run(this.sql);
    const rows = raw.map((r) => this.read(r));
    if (this.d.name !== 'postgres') rows.sort(byDeliveryOrder);
    return { rows, now: raw.length ? this.t.toMillis(raw[0].db_now) : (now ?? NaN) };
  }

  /**
   * MySQL/MariaDB, inside the claim's transaction once `ids` are locked: their groups, and which
   * of them have an earlier group member that still holds the group and is not among `ids` (taken
   * or being claimed by another node since the candidates were read): those are left out.
   */
  private async groupsOfTaken(
    tx: SqlClient,
    ids: readonly string[],
    now: Now,
  ): Promise<{ groups: Map<string, string>; blocked: Set<string> }> {
    const b = new Binder(this.d);
    const inner =
      `SELECT 1 FROM ${this.groupTable} hf_e JOIN ${this.table} hf_em ON hf_em.ID = hf_e.ID ` +
      `WHERE hf_e.GROUP_KEY = hf_g.GROUP_KEY AND ${CorMessageQueries.earlier('hf_e', 'hf_g')} ` +
      `AND ${this.holdsGroup(b, now)} AND hf_e.ID NOT IN (${b.list(ids)})`;
    const rows = await tx.query<{ id: string; group_key: string; blocked: unknown }>(
      `SELECT hf_g.ID AS id, hf_g.GROUP_KEY AS group_key, CASE WHEN EXISTS (${inner}) THEN 1 ELSE 0 END AS blocked ` +
        `FROM ${this.groupTable} hf_g WHERE hf_g.ID IN (${b.list(ids)})`,
      b.params,
    );
    const groups = new Map<string, string>();
    const blocked = new Set<string>();
    for (const r of rows) {
      groups.set(r.id, r.group_key);
      if (toNumber(r.blocked)) blocked.add(r.id);
    }
    return { groups, blocked };
  }

  /**
   * Runs a delete of messages; with groups, in one transaction with the delete of their group
   * rows, so a crash between the two leaves no group row behind.
   */
  private async deleting(
    ids: readonly string[],
    work: (client: SqlClient) => Promise<number>,
  ): Promise<number> {
    if (this.groupTable === undefined) return work(this.sql);
    return this.sql.transaction(async (tx) => {
      const deleted = await work(tx);
      await this.deleteGroupsOf(tx, ids);
      return deleted;
    });
  }

  /**
   * Removes the group rows of these messages once the messages are gone (a message still in the
   * table, e.g. whose claim another node took meanwhile, keeps its group).
   */
  private async deleteGroupsOf(client: SqlClient, ids: readonly string[]): Promise<void> {
    if (this.groupTable === undefined || !ids.length) return;
    const b = new Binder(this.d);
    if (this.d.name === 'mysql' || this.d.name === 'mariadb') {
      const target = this.keyedIn(b, this.groupTable, ids);
      await client.execute(
        `DELETE ${target.deleteFrom} LEFT JOIN ${this.table} hf_m ON hf_m.ID = m.ID WHERE hf_m.ID IS NULL`,
        b.params,
      );
      return;
    }
    await client.execute(
      `DELETE FROM ${this.groupTable} AS hf_g WHERE hf_g.ID IN (${b.list(ids)}) ` +
        `AND NOT EXISTS (SELECT 1 FROM ${this.table} hf_m WHERE hf_m.ID = hf_g.ID)`,
      b.params,
    );
  }

  /**
   * Group rows whose message is gone (deleted by a Java client or by hand): up to `limit` of them
   * are deleted; returns how many. Run by the expiry cleanup.
   */
  async deleteOrphanGroups(limit: number): Promise<number> {
    if (this.groupTable === undefined) return 0;
    const rows = await this.sql.query<{ id: string }>(
      this.d.limit(
        `SELECT hf_g.ID AS id FROM ${this.groupTable} hf_g LEFT JOIN ${this.table} hf_m ON hf_m.ID = hf_g.ID ` +
          `WHERE hf_m.ID IS NULL`,
        limit,
      ),
    );
    await this.deleteGroupsOf(
      this.sql,
      rows.map((r) => r.id),
    );
    return rows.length;
  }

  private async claimByKeys(
    limit: number,
    now: Now,
    leaseMs: number,
    hold?: (tx: SqlClient) => Promise<void>,
  ): Promise<{ rows: MessageRow[]; now: number }> {
    // READ COMMITTED: at REPEATABLE READ InnoDB keeps the lock on every row a locking read looked
    // at, also on those its WHERE then refused: a claim would hold rows another node had just
    // leased, and that node's delete of them would wait for this claim to commit (measured: a
    // healthy worker at 0.53x beside a slow one). At READ COMMITTED those locks go at once, so a
    // claim holds exactly the rows it takes. Core's transaction: the server ends it if this
    // client goes silent inside it for the client's idleInTransactionTimeout.
    return this.sql.transaction(
      async (tx) => {
        const taken: (RawRow & { db_now: unknown })[] = [];
        let after: { inserted_ms: unknown; id: string } | undefined;
        const order: string[] = [];
        // A few rounds of candidates: enough to fill a batch past rows other nodes hold.
        for (let round = 0; round < 4 && taken.length < limit; round++) {
          const candidates = await this.candidates(tx, limit, now, after);
          if (!candidates.length) break;
          after = candidates[candidates.length - 1];
          order.push(...candidates.map((c) => c.id));
          for (let i = 0; i < candidates.length && taken.length < limit;) {
            const keys = candidates.slice(i, i + (limit - taken.length)).map((c) => c.id);
            i += keys.length;
            const b = new Binder(this.d);
            const dbNow = `${this.t.read(this.now(b, now))} AS db_now`;
            const target = this.keyed(b, keys);
            const due = this.statusCondition('due', () => this.now(b, now));
            taken.push(
              ...(await tx.query<RawRow & { db_now: unknown }>(
                `SELECT ${dbNow}, ${this.columns(true)} FROM ${target.from} WHERE ${target.where}${due}` +
                  this.d.forUpdate(true),
                b.params,
              )),
            );
          }
          if (candidates.length < limit) break;
        }
        let groups: Map<string, string> | undefined;
        if (this.groupTable !== undefined && taken.length) {
          const found = await this.groupsOfTaken(
            tx,
            taken.map((r) => r.id),
            now,
          );
          groups = found.groups;
          // Left out: locked until this transaction ends, but never leased.
          if (found.blocked.size)
            taken.splice(0, taken.length, ...taken.filter((r) => !found.blocked.has(r.id)));
        }
        if (!taken.length) return { rows: [], now: now ?? NaN };
        // Delivery order is the candidates' order, as the database sorted them.
        const position = new Map(order.map((id, i) => [id, i]));
        taken.sort((x, y) => position.get(x.id)! - position.get(y.id)!);
        // (the join returns the rows in no particular order)
        const u = new Binder(this.d);
        const target = this.keyed(
          u,
          taken.map((r) => r.id),
        );
        // The lease end as a bound value (the database clock read above, plus the lease), so the
        // node knows exactly what it wrote: that value is its claim (see extendLeases).
        const dbNow = this.t.toMillis(taken[0].db_now);
        const until = (now ?? dbNow) + leaseMs;
        await tx.execute(
          `UPDATE ${target.from} SET NEXT_RETRY = ${this.t.at(u, until)} WHERE ${target.where}1 = 1`,
          u.params,
        );
        if (hold) await hold(tx);
        const rows = taken.map((r) => {
          const group = groups?.get(r.id);
          return { ...this.read(r), nextRetry: until, ...(group !== undefined ? { group } : {}) };
        });
        return { rows, now: dbNow };
      },
      { isolation: 'read committed' },
    );
  }

  /** Due keys in delivery order, after `after` when given: a plain read, no lock. */
  private async candidates(
    tx: SqlClient,
    limit: number,
    now: Now,
    after?: { inserted_ms: unknown; id: string },
  ): Promise<{ inserted_ms: unknown; id: string }[]> {
    const b = new Binder(this.d);
    let where = this.statusCondition('due', () => this.now(b, now));
    if (after) {
      const at = this.t.at(b, this.t.toMillis(after.inserted_ms));
      const again = this.t.at(b, this.t.toMillis(after.inserted_ms));
      where += ` AND (INSERTED > ${at} OR (INSERTED = ${again} AND ID > ${b.bind(after.id)}))`;
    }
    if (this.groupTable !== undefined) where += this.groupReady(b, now, 'hf_m');
    return tx.query<{ inserted_ms: unknown; id: string }>(
      this.d.limit(
        `SELECT ID AS id, ${this.t.read('INSERTED')} AS inserted_ms FROM ${this.table} ${this.groupTable !== undefined ? 'hf_m ' : ''}${this.orderIndexHint()}` +
          `WHERE ${where} ORDER BY INSERTED, ID`,
        limit,
      ),
      b.params,
    );
  }

  /**
   * MySQL/MariaDB: walk the delivery-order index. Left to itself the optimizer prefers a full
   * scan plus a sort at some table sizes, which is slow on a backlog (and would lock the whole
   * backlog if the read were a locking one).
   */
  private orderIndexHint(): string {
    if ((this.d.name !== 'mysql' && this.d.name !== 'mariadb') || !this.hasOrderIndex) return '';
    return `FORCE INDEX (${this.orderIndex}) `;
  }

  /**
   * Rows still claimed by this node: NEXT_RETRY is still the lease end this node wrote (cut to
   * the millisecond), within the same millisecond. Nothing else writes that value: another node
   * claims a row only after its lease has ended and writes its own later lease end; a failure,
   * a release, a pause or an admin's retry write other times. The statement's target already
   * holds these ids only; with one lease end (the usual case) this is a plain range on
   * NEXT_RETRY (an `OR` of id lists made PostgreSQL's delete of a batch markedly slower), else
   * `(…) OR (…)`, one term per lease end.
   */
  private owned(b: Binder, leases: readonly Lease[]): string {
    const byEnd = new Map<number, string[]>();
    for (const { id, until } of leases) byEnd.set(until, [...(byEnd.get(until) ?? []), id]);
    const range = (until: number) =>
      `NEXT_RETRY >= ${this.t.at(b, until)} AND NEXT_RETRY < ${this.t.at(b, until + 1)}`;
    if (byEnd.size === 1) return `(${range([...byEnd.keys()][0])})`;
    const terms = [...byEnd].map(([until, ids]) => `(ID IN (${b.list(ids)}) AND ${range(until)})`);
    return `(${terms.join(' OR ')})`;
  }

  /**
   * A heartbeat: moves the lease end of every row still claimed by this node to `until` (epoch
   * ms), in one statement, and returns the ids that are still this node's (those it extended).
   */
  async extendLeases(leases: readonly Lease[], until: number): Promise<Set<string>> {
    if (!leases.length) return new Set();
    const ids = leases.map((l) => l.id);
    // Bound in the order the placeholders appear: the keys of the join first on MySQL/MariaDB,
    // after the SET elsewhere (ID IN …).
    const b = new Binder(this.d);
    const joined = this.d.name === 'mysql' || this.d.name === 'mariadb';
    const early = joined ? this.keyed(b, ids) : undefined;
    const set = this.t.at(b, until);
    const { from, where } = early ?? this.keyed(b, ids);
    const changed = await this.sql.execute(
      `UPDATE ${from} SET NEXT_RETRY = ${set} WHERE ${where}${this.owned(b, leases)}`,
      b.params,
    );
    if (changed >= leases.length) return new Set(ids);
    // Some were not ours any more (or a driver counts unchanged rows apart): ask which are.
    const r = new Binder(this.d);
    const target = this.keyed(r, ids);
    const rows = await this.sql.query<{ id: string }>(
      `SELECT ID AS id FROM ${target.from} WHERE ${target.where}${this.owned(
        r,
        ids.map((id) => ({ id, until })),
      )}`,
      r.params,
    );
    return new Set(rows.map((row) => row.id));
  }

  /** Delivered: the rows this node still holds are gone (a claim lost meanwhile is left alone). */
  async deleteOwned(leases: readonly Lease[]): Promise<number> {
    if (!leases.length) return 0;
    const b = new Binder(this.d);
    const target = this.keyed(
      b,
      leases.map((l) => l.id),
    );
    return this.deleting(
      leases.map((l) => l.id),
      (client) =>
        client.execute(`DELETE ${target.deleteFrom} WHERE ${target.where}${this.owned(b, leases)}`, b.params),
    );
  }

  /** Delivered: the rows are gone. */
  async deleteDelivered(ids: readonly string[]): Promise<number> {
    if (!ids.length) return 0;
    const b = new Binder(this.d);
    const target = this.keyed(b, ids);
    return this.deleting(ids, (client) =>
      client.execute(`DELETE ${target.deleteFrom} WHERE ${target.where}1 = 1`, b.params),
    );
  }

  /**
   * The rows with these ids, as a statement target. MySQL/MariaDB: a join with the keys, which
   * InnoDB resolves by primary key at any table size; `ID IN (…)` turns into a scan of a small
   * table there, and a scanning write locks (and waits for) every row it passes. Elsewhere
   * `ID IN (…)`. `where` ends ready for another condition (`… AND ` or empty).
   */
  private keyed(b: Binder, ids: readonly string[]): { from: string; deleteFrom: string; where: string } {
    return this.keyedIn(b, this.table, ids);
  }

  /** `keyed` on another table of the inbox (the group table). */
  private keyedIn(
    b: Binder,
    table: string,
    ids: readonly string[],
  ): { from: string; deleteFrom: string; where: string } {
    if (this.d.name === 'mysql' || this.d.name === 'mariadb') {
      const keys = ids
        .map((id, i) => `SELECT ${b.bind(id)}${i === 0 ? ' AS hf_key' : ''}`)
        .join(' UNION ALL ');
      const from = `${table} AS m JOIN (${keys}) AS k ON m.ID = k.hf_key`;
      return { from, deleteFrom: `m FROM ${from}`, where: '' };
    }
    const where = `ID IN (${b.list(ids)}) AND `;
    return { from: table, deleteFrom: `FROM ${table}`, where };
  }

  /**
   * A failed attempt. Applies only if nobody else recorded an attempt meanwhile (RETRIES is
   * unchanged: a counter, never a timestamp, as the compare-and-set token) and no admin paused
   * it. `delayMs` undefined parks the message: NEXT_RETRY NULL with RETRIES at maxRetries.
   */
  async recordFailure(
    id: string,
    seenRetries: number,
    error: string,
    delayMs: number | undefined,
    now: Now,
  ): Promise<boolean> {
    const b = new Binder(this.d);
    const retries = b.bind(seenRetries + 1);
    const next = delayMs === undefined ? 'NULL' : this.nowPlus(b, now, Math.round(delayMs));
    const err = b.bind(error);
    const where = `ID = ${b.bind(id)} AND RETRIES = ${b.bind(seenRetries)} AND (NEXT_RETRY IS NULL OR NEXT_RETRY < ${this.farFuture()})`;
    return (
      (await this.sql.execute(
        `UPDATE ${this.table} SET RETRIES = ${retries}, NEXT_RETRY = ${next}, ERROR = ${err} WHERE ${where}`,
        b.params,
      )) > 0
    );
  }

  /**
   * Gives leased messages back without counting an attempt: due at `now + delayMs` (0: at once).
   * `error` (if given) is stored so an admin sees why (e.g. no handler).
   */
  async release(ids: readonly string[], delayMs: number, now: Now, error?: string): Promise<number> {
    if (!ids.length) return 0;
    // Bound in the order the placeholders appear: the keys come first on MySQL/MariaDB (a join),
    // last elsewhere (ID IN …).
    const b = new Binder(this.d);
    const joined = this.d.name === 'mysql' || this.d.name === 'mariadb';
    const target = joined ? this.keyed(b, ids) : undefined;
    const next = this.nowPlus(b, now, Math.max(0, Math.round(delayMs)));
    const err = error === undefined ? '' : `, ERROR = ${b.bind(error)}`;
    const { from, where } = target ?? this.keyed(b, ids);
    return this.sql.execute(
      `UPDATE ${from} SET NEXT_RETRY = ${next}${err} WHERE ${where}(NEXT_RETRY IS NULL OR NEXT_RETRY < ${this.farFuture()})`,
      b.params,
    );
  }

  /** Up to `limit` ids of expired messages (through the EXPIRATION index). */
  async expiredIds(limit: number, now: Now): Promise<string[]> {
    const b = new Binder(this.d);
    const n = this.now(b, now);
    const rows = await this.sql.query<{ id: string }>(
      this.d.limit(
        `SELECT ID AS id FROM ${this.table} WHERE EXPIRATION IS NOT NULL AND EXPIRATION <= ${n}`,
        limit,
      ),
      b.params,
    );
    return rows.map((r) => r.id);
  }

  async deleteExpired(ids: readonly string[], now: Now): Promise<number> {
    if (!ids.length) return 0;
    const b = new Binder(this.d);
    const target = this.keyed(b, ids);
    const expired = `EXPIRATION IS NOT NULL AND EXPIRATION <= ${this.now(b, now)}`;
    return this.deleting(ids, (client) =>
      client.execute(`DELETE ${target.deleteFrom} WHERE ${target.where}${expired}`, b.params),
    );
  }

  // ---- management --------------------------------------------------------------------------

  async list(
    status: MessageStatus | undefined,
    limit: number,
    offset: number,
    now: number,
  ): Promise<MessageRow[]> {
    const b = new Binder(this.d);
    const where = status ? ` WHERE ${this.statusCondition(status, () => this.t.at(b, now))}` : '';
    const select = this.d.limit(
      `SELECT ${this.columns(false)} FROM ${this.table}${where} ORDER BY INSERTED, ID`,
      limit,
    );
    const rows = await this.sql.query<RawRow>(
      offset > 0 ? `${select} OFFSET ${Math.trunc(offset)}` : select,
      b.params,
    );
    return rows.map((r) => this.read(r));
  }

  async find(id: string, withPayload = false): Promise<MessageRow | undefined> {
    const b = new Binder(this.d);
    const [row] = await this.sql.query<RawRow>(
      `SELECT ${this.columns(withPayload)} FROM ${this.table} WHERE ID = ${b.bind(id)}`,
      b.params,
    );
    return row ? this.read(row) : undefined;
  }

  async counts(now: number): Promise<Record<MessageStatus, number> & { total: number }> {
    const b = new Binder(this.d);
    const statuses: MessageStatus[] = ['due', 'retrying', 'parked', 'paused', 'expired'];
    const sums = statuses.map(
      (s) => `SUM(CASE WHEN ${this.statusCondition(s, () => this.t.at(b, now))} THEN 1 ELSE 0 END) AS ${s}`,
    );
    const [row] = await this.sql.query<Record<string, unknown>>(
      `SELECT COUNT(*) AS total, ${sums.join(', ')} FROM ${this.table}`,
      b.params,
    );
    const out = { total: toNumber(row?.total ?? 0) } as Record<MessageStatus, number> & { total: number };
    for (const s of statuses) out[s] = toNumber(row?.[s] ?? 0) || 0;
    return out;
  }

  async countByType(): Promise<
    { namespace: string | null; name: string; revision: string | null; count: number }[]
  > {
    const rows = await this.sql.query<{
      ns: string | null;
      name: string;
      revision: string | null;
      c: unknown;
    }>(
      `SELECT PAYLOAD_TYPE_NAMESPACE AS ns, PAYLOAD_TYPE_NAME AS name, PAYLOAD_TYPE_REVISION AS revision, COUNT(*) AS c ` +
        `FROM ${this.table} GROUP BY PAYLOAD_TYPE_NAMESPACE, PAYLOAD_TYPE_NAME, PAYLOAD_TYPE_REVISION`,
    );
    return rows.map((r) => ({
      namespace: r.ns === null || r.ns === '' ? null : r.ns,
      name: r.name,
      revision: r.revision ?? null,
      count: toNumber(r.c),
    }));
  }

  /** Paused: NEXT_RETRY at the seed's FAR_FUTURE. */
  async pause(id: string): Promise<number> {
    if (!this.canPause) throw new PauseUnsupportedError(this.table, id);
    const b = new Binder(this.d);
    const set = this.t.at(b, FAR_FUTURE);
    return this.sql.execute(
      `UPDATE ${this.table} SET NEXT_RETRY = ${set} WHERE ID = ${b.bind(id)}`,
      b.params,
    );
  }

  /** A paused message back to its state before the pause (due, or parked if exhausted). */
  async resume(id: string): Promise<number> {
    const b = new Binder(this.d);
    const where = `ID = ${b.bind(id)} AND NEXT_RETRY >= ${this.farFuture()}`;
    return this.sql.execute(`UPDATE ${this.table} SET NEXT_RETRY = NULL WHERE ${where}`, b.params);
  }

  /** Due now, whatever its state; RETRIES stays (a parked message gets one more attempt). */
  async retryNow(id: string, now: Now): Promise<number> {
    const b = new Binder(this.d);
    const set = this.now(b, now);
    return this.sql.execute(
      `UPDATE ${this.table} SET NEXT_RETRY = ${set} WHERE ID = ${b.bind(id)}`,
      b.params,
    );
  }

  async setRetries(id: string, retries: number): Promise<number> {
    const b = new Binder(this.d);
    return this.sql.execute(
      `UPDATE ${this.table} SET RETRIES = ${b.bind(retries)} WHERE ID = ${b.bind(id)}`,
      b.params,
    );
  }

  async delete(id: string): Promise<number> {
    const b = new Binder(this.d);
    return this.deleting([id], (client) =>
      client.execute(`DELETE FROM ${this.table} WHERE ID = ${b.bind(id)}`, b.params),
    );
  }
}

/** INSERTED, then ID: the order every list and every delivery follows. */
function byDeliveryOrder(a: MessageRow, b: MessageRow): number {
  return a.inserted - b.inserted || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
