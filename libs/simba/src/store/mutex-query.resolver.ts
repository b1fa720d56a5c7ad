import { statement, StatementBinder, tableName, type SqlDialect, type Statement } from '@holdfast/core/kit';
import type { BatchRequest } from '../mutex/mutex-batch';
import {
  MEMBER_ROW_PREFIX,
  MUTEX_NAME_MAX_LENGTH,
  OWNER_ID_MAX_LENGTH,
  SIMBA_MUTEX_TABLE,
} from './simba-mutex.table';
import { FailoverGrace, TIMELINE_MARKER } from './failover-grace';
import {
  atLeastAfter,
  busyTimeoutQuery,
  insertMissing,
  lockWaitBound,
  transactionStatementTimeout,
  withLockWaitTimeout,
  withStatementTimeout,
} from './mutex-sql.dialect';

/** The columns of a row as the repositories read them (`now_ms` aside). */
const ROW_COLUMNS = 'mutex, acquired_at, ttl_at, transition_at, owner_id, version';

/** Mutexes per UPDATE of a tick sent statement by statement: well under each driver's parameter limit. */
const UPDATE_CHUNK = 500;
/** Mutexes per SELECT of such a tick (one value each). */
const READ_CHUNK = UPDATE_CHUNK * 4;

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** The statements of one tick (see MutexQueryResolver.tick). */
export interface TickStatements {
  /** Sent in order, on one connection; the rows of those that `read` are the tick's rows. */
  steps: Array<{ statement: Statement; read: boolean }>;
  /**
   * True when the tick is a transaction by itself (one statement, or reads only): sent without
   * BEGIN and COMMIT. Otherwise the steps run in one transaction, the last sent with its COMMIT.
   */
  alone: boolean;
}

/**
 * Every SQL statement on `simba_mutex`, built from the core dialect pieces and returned as core
 * Statements (text and values; the repository runs them). `now` is always the database clock
 * (`dialect.nowMillis`) evaluated inside the statement, never an app timestamp.
 */
export class MutexQueryResolver {
  readonly table: string;
  /** PostgreSQL: no grant during the leases a lost primary may have granted (see FailoverGrace). */
  readonly grace: FailoverGrace;

  constructor(
    private readonly dialect: SqlDialect,
    prefix: string,
  ) {
    this.table = tableName(prefix, SIMBA_MUTEX_TABLE.name);
    this.grace = new FailoverGrace(dialect, this.table);
  }

  /**
   * One tick of the contend loop: the acquisitions and renewals of `acquires`, and a read of every
   * row in `reads` with the database clock, as few round trips as the database allows:
   * - with data-modifying CTEs (PostgreSQL): ONE statement, a transaction by itself (`tickInOneStatement`);
   * - with compound statements (MariaDB): one compound of the UPDATEs and the read, which the
   *   transaction sends with its opening and its COMMIT;
   * - elsewhere (MySQL, SQLite): the UPDATEs, then the reads, in one transaction.
   * A read alone is one SELECT without a transaction (a read waits for no row lock). Every
   * statement is bounded server-side to `timeoutMs` where the database can (`timed`).
   */
  tick(
    acquires: readonly BatchRequest[],
    reads: readonly string[],
    graceMs: number,
    timeoutMs: number,
  ): TickStatements {
    const d = this.dialect;
    if (acquires.length && d.writableCte && d.arraySource && d.name === 'postgres') {
      return {
        steps: [{ statement: this.tickInOneStatement(acquires, reads, graceMs, timeoutMs), read: true }],
        alone: true,
      };
    }
    const selects = chunks(reads, READ_CHUNK).map((part) => this.timed(this.selectMany(part), timeoutMs));
    if (!acquires.length)
      return { steps: selects.map((statement) => ({ statement, read: true })), alone: selects.length === 1 };
    const writes: Statement[] = [];
    const check = this.grace.check(graceMs);
    if (check) writes.push(check);
    for (const group of groupAcquires(acquires)) {
      for (const part of chunks(group.items, UPDATE_CHUNK)) {
        const takes = part.filter((r) => !r.renew);
        const renewals = part.filter((r) => r.renew);
        writes.push(this.acquireMany(takes, renewals, group.ttl, group.transition));
      }
    }
    const compound = d.compoundTransactions;
    // Inside a compound statement MariaDB ignores the statement timeout: the lock waits get their
    // own bound (withLockWaitTimeout).
    const timedWrites = writes.map((w) =>
      compound
        ? rewritten(w, (sql) => withLockWaitTimeout(d, sql, timeoutMs) ?? sql)
        : this.timed(w, timeoutMs),
    );
    if (compound) {
      // The UPDATEs go with the first read, in one compound statement (its rows are the
      // compound's one result set); MariaDB sends the transaction's opening in front of it and,
      // when it is the last step, the COMMIT after it: one round trip.
      const [first, ...rest] = selects;
      const all = [...timedWrites, first];
      const together = statement(
        compound.compound(all.map((s) => s.sql)),
        all.flatMap((s) => s.params),
      );
      return {
        steps: [{ statement: together, read: true }, ...rest.map((s) => ({ statement: s, read: true }))],
        alone: false,
      };
    }
    return {
      steps: [
        ...timedWrites.map((statement) => ({ statement, read: false })),
        ...selects.map((statement) => ({ statement, read: true })),
      ],
      alone: false,
    };
  }

  /**
   * A tick in one statement of data-modifying CTEs (PostgreSQL), its own transaction:
   * - `hf_asked`: every mutex asked about, from bound arrays (one request per mutex: a row is
   *   updated once per statement), with what is asked of it (0 read, 1 take, 2 take or renew);
   * - `hf_bound`: the lock-wait bound (`lockWaitBound`), named in the condition of
   *   every UPDATE, so it is set before any of them can wait for a row another transaction
   *   writes: the statement ends server-side after `timeoutMs` of such a wait, as the old
   *   transaction's `statement_timeout` made it, with nothing sent before it;
   * - the failover grace (`FailoverGrace.ctes`): on a new timeline it moves the marker and
   *   holds every row, and then nothing is granted;
   * - `hf_granted`: Simba's conditional UPDATE per row (free once `transition_at` has passed, or
   *   renewed by its owner during its transition), `RETURNING` the new rows;
   * - the rows: each as this statement wrote it (granted or held), else as it was.
   * A row another transaction changed while this one waited for it, and which then no longer met
   * the condition, is read as it was before that change (all CTEs share one snapshot): an older
   * reading, never a lease that was not granted (its `now_ms` comes later than the row).
   */
  private tickInOneStatement(
    acquires: readonly BatchRequest[],
    reads: readonly string[],
    graceMs: number,
    timeoutMs: number,
  ): Statement {
    const d = this.dialect;
    const b = this.binder();
    const now = d.nowMillis;
    const source = this.askedSource(acquires, reads, b);
    const bounded = '(SELECT hf_on FROM hf_bound) IS NOT NULL';
    const ctes = [
      `hf_asked AS (SELECT a_mutex, a_owner, a_ttl, a_lease, a_kind FROM ${source})`,
      `hf_bound AS (SELECT ${lockWaitBound(d, b, timeoutMs)!} AS hf_on)`,
    ];
    const grace = this.grace.ctes(b, graceMs, bounded);
    if (grace) ctes.push(grace.sql);
    ctes.push(
      `hf_granted AS (UPDATE ${this.table} SET owner_id = a_owner, acquired_at = ${this.nextToken()}, ` +
        `ttl_at = ${now} + a_ttl, transition_at = ${now} + a_lease, version = version + 1 FROM hf_asked ` +
        `WHERE mutex = a_mutex AND a_kind > 0 AND mutex <> ${b.bind(TIMELINE_MARKER)} ` +
        `AND (transition_at < ${now} OR (a_kind = 2 AND owner_id = a_owner AND transition_at > ${now})) ` +
        `AND ${bounded}${grace ? ` AND NOT EXISTS (SELECT 1 FROM ${grace.moved})` : ''} RETURNING ${ROW_COLUMNS})`,
    );
    const askedKeys = d.keyIn('mutex', 'SELECT a_mutex FROM hf_asked');
    const written = ['hf_granted', ...(grace ? [grace.graced] : [])];
    const rows = [
      `SELECT ${ROW_COLUMNS} FROM hf_granted`,
      ...(grace ? [`SELECT ${ROW_COLUMNS} FROM ${grace.graced} WHERE ${askedKeys}`] : []),
      `SELECT ${ROW_COLUMNS} FROM ${this.table} hf_t WHERE ${askedKeys} ` +
        written
          .map((w) => `AND NOT EXISTS (SELECT 1 FROM ${w} hf_w WHERE hf_w.mutex = hf_t.mutex)`)
          .join(' '),
    ];
    return b.statement(
      `WITH ${ctes.join(', ')} ` +
        `SELECT mutex AS mutex, acquired_at AS acquired_at, ttl_at AS ttl_at, transition_at AS transition_at, ` +
        `owner_id AS owner_id, version AS version, ${now} AS now_ms FROM (${rows.join(' UNION ALL ')}) hf_rows`,
    );
  }

  /**
   * `hf_asked`'s rows as bound arrays: every mutex asked about (one request per mutex: a row is
   * updated once per statement), with what is asked of it (0 read, 1 take, 2 take or renew).
   */
  private askedSource(
    acquires: readonly BatchRequest[],
    reads: readonly string[],
    b: StatementBinder,
  ): string {
    const asked = new Map<string, { owner: string; ttl: number; lease: number; kind: number }>();
    for (const mutex of reads) asked.set(mutex, { owner: '', ttl: 0, lease: 0, kind: 0 });
    for (const r of onePerMutex(acquires)) {
      asked.set(r.mutex, {
        owner: r.contenderId,
        ttl: Math.trunc(r.ttl),
        lease: Math.trunc(r.ttl + r.transition),
        kind: r.renew ? 2 : 1,
      });
    }
    const values = [...asked.values()];
    return this.dialect.arraySource!([
      {
        name: 'a_mutex',
        type: { kind: 'varchar', length: MUTEX_NAME_MAX_LENGTH },
        placeholder: b.bind([...asked.keys()]),
      },
      {
        name: 'a_owner',
        type: { kind: 'varchar', length: OWNER_ID_MAX_LENGTH },
        placeholder: b.bind(values.map((v) => v.owner)),
      },
      { name: 'a_ttl', type: { kind: 'bigint' }, placeholder: b.bind(values.map((v) => v.ttl)) },
      { name: 'a_lease', type: { kind: 'bigint' }, placeholder: b.bind(values.map((v) => v.lease)) },
      { name: 'a_kind', type: { kind: 'int' }, placeholder: b.bind(values.map((v) => v.kind)) },
    ]);
  }

  private binder(): StatementBinder {
    return new StatementBinder(this.dialect);
  }

  /**
   * Creates the rows of mutexes that are missing, free (`owner_id` ''), with a value for every
   * column (Simba's DDL has no defaults); an existing row is left alone, whoever created it.
   */
  ensureRows(mutexes: readonly string[]): Statement {
    return insertMissing(this.dialect, {
      table: this.table,
      columns: ['mutex', 'acquired_at', 'ttl_at', 'transition_at', 'owner_id', 'version'],
      key: 'mutex',
      keys: mutexes,
      row: (mutex) => `${mutex}, 0, 0, 0, '', 0`,
    });
  }

  /**
   * Simba's conditional acquire: free once `transition_at` has passed, or a renewal by the owner
   * while its transition is still running. `version + 1` is Simba's optimistic lock; `acquired_at`
   * (the fencing token) is the database time, or the previous token + 1 if the clock is behind it.
   */
  acquire(mutex: string, contenderId: string, ttlMs: number, transitionMs: number): Statement {
    const b = this.binder();
    const now = this.dialect.nowMillis;
    return b.statement(
      `UPDATE ${this.table} SET acquired_at = ${this.nextToken()}, ttl_at = ${now} + ${b.bind(Math.trunc(ttlMs))}, ` +
        `transition_at = ${now} + ${b.bind(Math.trunc(ttlMs + transitionMs))}, owner_id = ${b.bind(contenderId)}, version = version + 1 ` +
        `WHERE mutex = ${b.bind(mutex)} AND (transition_at < ${now} OR (owner_id = ${b.bind(contenderId)} AND transition_at > ${now}))`,
    );
  }

  /**
   * Acquire-or-renew of many mutexes in one statement, Simba's condition per row: a row is taken
   * once its `transition_at` has passed (owner set to the contender named for that mutex), and a
   * row in `renewals` is renewed while its owner (one of the renewing contenders) is still in its
   * transition. Renewals check `owner_id IN (renewing ids)` rather than each exact pair: a row of
   * the list owned by another contender of this instance would be renewed for that contender,
   * which cannot happen while the statement runs before the renewing owner's deadline (the local
   * deadline falls a statement timeout before `transition_at`).
   */
  acquireMany(
    takes: ReadonlyArray<{ mutex: string; contenderId: string }>,
    renewals: ReadonlyArray<{ mutex: string; contenderId: string }>,
    ttlMs: number,
    transitionMs: number,
  ): Statement {
    const b = this.binder();
    const now = this.dialect.nowMillis;
    const all = [...takes, ...renewals];
    const ids = new Set(all.map((t) => t.contenderId));
    const newOwner =
      ids.size === 1
        ? b.bind(all[0].contenderId)
        : `CASE mutex ${all.map((t) => `WHEN ${b.bind(t.mutex)} THEN ${b.bind(t.contenderId)}`).join(' ')} END`;
    // MySQL assigns left to right and later assignments see earlier ones: owner_id goes first,
    // while transition_at still holds the old value.
    const set =
      `owner_id = CASE WHEN transition_at < ${now} THEN ${newOwner} ELSE owner_id END, ` +
      `acquired_at = ${this.nextToken()}, ttl_at = ${now} + ${b.bind(Math.trunc(ttlMs))}, ` +
      `transition_at = ${now} + ${b.bind(Math.trunc(ttlMs + transitionMs))}, version = version + 1`;
    let where = `mutex IN (${b.list(all.map((t) => t.mutex))}) AND (transition_at < ${now}`;
    if (renewals.length) {
      const renewIds = [...new Set(renewals.map((r) => r.contenderId))];
      where +=
        ` OR (mutex IN (${b.list(renewals.map((r) => r.mutex))}) AND owner_id IN (${b.list(renewIds)}) ` +
        `AND transition_at > ${now})`;
    }
    return b.statement(`UPDATE ${this.table} SET ${set} WHERE ${where})`);
  }

  /** The rows of many mutexes, with the database clock read in the same statement. */
  selectMany(mutexes: readonly string[]): Statement {
    const b = this.binder();
    return b.statement(`${this.selectRows()} WHERE mutex IN (${b.list(mutexes)})`);
  }

  /** The columns of a row, and the database clock read in the same statement. */
  private selectRows(): string {
    return (
      `SELECT mutex AS mutex, acquired_at AS acquired_at, ttl_at AS ttl_at, transition_at AS transition_at, ` +
      `owner_id AS owner_id, version AS version, ${this.dialect.nowMillis} AS now_ms FROM ${this.table}`
    );
  }

  /** `acquired_at` of a grant: the database time, at least the previous token + 1. */
  private nextToken(): string {
    return atLeastAfter(this.dialect, this.dialect.nowMillis, 'acquired_at');
  }

  /**
   * Gives the mutex up: no owner, and acquirable at once (transition in the past). `acquired_at`
   * is kept: the next grant's fencing token is derived from it.
   */
  release(mutex: string, contenderId: string): Statement {
    const b = this.binder();
    const now = this.dialect.nowMillis;
    return b.statement(
      `UPDATE ${this.table} SET owner_id = '', ttl_at = ${now} - 1, transition_at = ${now} - 1, ` +
        `version = version + 1 WHERE mutex = ${b.bind(mutex)} AND owner_id = ${b.bind(contenderId)}`,
    );
  }

  /** The row with the database clock read in the same statement. */
  select(mutex: string): Statement {
    const b = this.binder();
    return b.statement(`${this.selectRows()} WHERE mutex = ${b.bind(mutex)}`);
  }

  /**
   * Every mutex of the table, by name, with the database clock read in the same statement (the
   * timeline marker of the failover grace and the spread groups' member rows are rows, not
   * mutexes: left out).
   */
  selectAll(): Statement {
    const b = this.binder();
    return b.statement(
      `${this.selectRows()} WHERE mutex <> ${b.bind(TIMELINE_MARKER)} AND mutex NOT LIKE ${b.bind(`${MEMBER_ROW_PREFIX}%`)} ORDER BY mutex`,
    );
  }

  /**
   * The member rows of a spread group (`<MEMBER_ROW_PREFIX><group>:…`, see MutexSpread) still in
   * their lease, with the database clock. The name has no LIKE wildcard in it (hex digits and ':').
   */
  selectMembers(group: string): Statement {
    const b = this.binder();
    const now = this.dialect.nowMillis;
    return b.statement(
      `SELECT owner_id AS owner_id FROM ${this.table} WHERE mutex LIKE ${b.bind(`${MEMBER_ROW_PREFIX}${group}:%`)} ` +
        `AND owner_id <> '' AND transition_at > ${now}`,
    );
  }

  /** The database clock alone (health check). */
  now(): Statement {
    return statement(this.dialect.selectRow(`${this.dialect.nowMillis} AS now_ms`));
  }

  /**
   * A statement run first in a transaction to bound every later statement server-side, where
   * the database has a transaction-scoped setting; undefined otherwise. PostgreSQL also ends a
   * transaction left idle (a client that hung mid-way) so its row lock cannot block standbys.
   */
  transactionTimeout(ms: number): Statement | undefined {
    return transactionStatementTimeout(this.dialect, ms);
  }

  /**
   * Bounds one statement server-side where the database has a per-statement form (MariaDB's
   * `SET STATEMENT max_statement_time = <s> FOR`). MySQL, SQLite, SQL Server and Oracle rely on
   * the client-side timeout (and SQLite on the DataSource's busy timeout).
   */
  timed(bound: Statement, ms: number): Statement {
    return rewritten(bound, (sql) => withStatementTimeout(this.dialect, sql, ms));
  }

  /** SQLite: reads the connection's busy timeout (how long a statement waits for the write lock). */
  busyTimeout(): Statement | undefined {
    const sql = busyTimeoutQuery(this.dialect);
    return sql === undefined ? undefined : statement(sql);
  }
}

/**
 * `s` with its text rewritten by `rewrite` (wrapped in a timeout), its bound values kept: the
 * rewrite adds no placeholder (as `StatementTemplate.withText`). `s` itself when nothing changed.
 */
function rewritten(s: Statement, rewrite: (sql: string) => string): Statement {
  const sql = rewrite(s.sql);
  return sql === s.sql ? s : { sql, params: s.params };
}

/**
 * One request per mutex for a statement that updates each row once: a renewal before a take
 * (several contenders of this instance may ask for one mutex in the same tick), else any one.
 */
function onePerMutex(acquires: readonly BatchRequest[]): BatchRequest[] {
  const picked = new Map<string, BatchRequest>();
  for (const r of acquires) {
    const other = picked.get(r.mutex);
    if (!other || (r.renew && !other.renew) || (r.renew === other.renew && Math.random() < 0.5))
      picked.set(r.mutex, r);
  }
  return [...picked.values()];
}

/**
 * Per (ttl, transition): one request per mutex, a renewal before a take (several contenders of
 * this instance may ask for one mutex in the same tick; the statement names one owner per row).
 */
function groupAcquires(
  acquires: readonly BatchRequest[],
): { ttl: number; transition: number; items: BatchRequest[] }[] {
  const groups = new Map<string, { ttl: number; transition: number; items: BatchRequest[] }>();
  for (const r of acquires) {
    const key = `${r.ttl}/${r.transition}`;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { ttl: r.ttl, transition: r.transition, items: [] }));
    group.items.push(r);
  }
  return [...groups.values()].map((g) => ({ ...g, items: onePerMutex(g.items) }));
}
