import {
  deleteLimited,
  statement,
  StatementBinder,
  tableName,
  type SqlDialect,
  type Statement,
} from '@holdfast/core/kit';
import type { HistoryOutcome, HistoryTypeFilter, InboxStatsMinute } from './history.types';
import { INBOX_HISTORY_TABLE, INBOX_STATS_TABLE } from './inbox-history.tables';

/** One history row as written. */
export interface HistoryRecord {
  entryId: string;
  messageId: string;
  namespace: string | null;
  name: string | null;
  revision: string | null;
  outcome: HistoryOutcome;
  attempt: number;
  error: string | null;
  node: string;
  atMs: number;
}

/** One stats row as written: a node's counters of a minute, or a sample (depth, parked, leader). */
export interface StatsRecord extends Omit<InboxStatsMinute, 'minute'> {
  entryId: string;
  node: string;
  minuteMs: number;
}

const HISTORY_COLUMNS =
  'ENTRY_ID, MESSAGE_ID, TYPE_NAMESPACE, TYPE_NAME, TYPE_REVISION, OUTCOME, ATTEMPT, ERROR, NODE, AT_MS';
/** The history's columns as read, in lower case on every database. */
const HISTORY_SELECT =
  'MESSAGE_ID AS message_id, TYPE_NAMESPACE AS namespace, TYPE_NAME AS name, TYPE_REVISION AS revision, ' +
  'OUTCOME AS outcome, ATTEMPT AS attempt, ERROR AS error, NODE AS node, AT_MS AS at_ms';
const STATS_COLUMNS = 'ENTRY_ID, NODE, MINUTE_MS, DELIVERED, FAILED, PARKED, DEPTH, PARKED_NOW, LEADER';

/** The statements of the history and stats tables (values, not run here). */
export class InboxHistoryStatements {
  readonly history: string;
  readonly stats: string;

  constructor(
    private readonly d: SqlDialect,
    prefix: string,
  ) {
    this.history = tableName(prefix, INBOX_HISTORY_TABLE.name);
    this.stats = tableName(prefix, INBOX_STATS_TABLE.name);
  }

  /** One multi-row INSERT of `records`. */
  insertHistory(records: readonly HistoryRecord[]): Statement {
    const b = new StatementBinder(this.d);
    const rows = records.map(
      (r) =>
        `(${b.list([r.entryId, r.messageId, r.namespace, r.name, r.revision, r.outcome, r.attempt, r.error, r.node, r.atMs])})`,
    );
    return b.statement(`INSERT INTO ${this.history} (${HISTORY_COLUMNS}) VALUES ${rows.join(', ')}`);
  }

  insertStats(records: readonly StatsRecord[]): Statement {
    const b = new StatementBinder(this.d);
    const rows = records.map(
      (r) =>
        `(${b.list([r.entryId, r.node, r.minuteMs, r.delivered, r.failed, r.parked, r.depth, r.parkedNow, r.leader])})`,
    );
    return b.statement(`INSERT INTO ${this.stats} (${STATS_COLUMNS}) VALUES ${rows.join(', ')}`);
  }

  /** A message's rows, oldest first. */
  ofMessage(id: string, limit: number): Statement {
    const b = new StatementBinder(this.d);
    return b.statement(
      this.d.limit(
        `SELECT ${HISTORY_SELECT} FROM ${this.history} WHERE MESSAGE_ID = ${b.bind(id)} ORDER BY AT_MS, ATTEMPT`,
        limit,
      ),
    );
  }

  /** The latest rows of a type, newest first (`outcome`: of that outcome only). */
  ofType(type: HistoryTypeFilter, limit: number, outcome?: HistoryOutcome): Statement {
    const b = new StatementBinder(this.d);
    const where = [`TYPE_NAME = ${b.bind(type.name)}`];
    for (const [column, value] of [
      ['TYPE_NAMESPACE', type.namespace],
      ['TYPE_REVISION', type.revision],
    ] as const) {
      if (value === null) where.push(`${column} IS NULL`);
      else if (value !== undefined) where.push(`${column} = ${b.bind(value)}`);
    }
    if (outcome) where.push(`OUTCOME = ${b.bind(outcome)}`);
    return b.statement(
      this.d.limit(
        `SELECT ${HISTORY_SELECT} FROM ${this.history} WHERE ${where.join(' AND ')} ORDER BY AT_MS DESC`,
        limit,
      ),
    );
  }

  /** At most `limit` history rows older than `beforeMs`. */
  pruneHistoryBefore(beforeMs: number, limit: number): Statement {
    return this.pruneBefore(this.history, 'AT_MS', beforeMs, limit);
  }

  /** At most `limit` stats rows of minutes before `beforeMs`. */
  pruneStatsBefore(beforeMs: number, limit: number): Statement {
    return this.pruneBefore(this.stats, 'MINUTE_MS', beforeMs, limit);
  }

  /** Reads nothing; fails when the table does not exist. */
  probe(): Statement {
    return statement(this.d.limit(`SELECT ENTRY_ID FROM ${this.history}`, 1));
  }

  countHistory(): Statement {
    return statement(`SELECT COUNT(*) AS c FROM ${this.history}`);
  }

  /** The ids of the `limit` oldest history rows. */
  oldestHistory(limit: number): Statement {
    return statement(
      this.d.limit(`SELECT ENTRY_ID AS id FROM ${this.history} ORDER BY AT_MS, ENTRY_ID`, limit),
    );
  }

  deleteHistory(ids: readonly string[]): Statement {
    const b = new StatementBinder(this.d);
    return b.statement(`DELETE FROM ${this.history} WHERE ENTRY_ID IN (${b.list(ids)})`);
  }

  /** Per minute since `sinceMs`, summed over nodes; the sample's figures as their maximum. */
  statsSince(sinceMs: number): Statement {
    const b = new StatementBinder(this.d);
    return b.statement(
      `SELECT MINUTE_MS AS minute, SUM(DELIVERED) AS delivered, SUM(FAILED) AS failed, SUM(PARKED) AS parked, ` +
        `MAX(DEPTH) AS depth, MAX(PARKED_NOW) AS parked_now, MAX(LEADER) AS leader ` +
        `FROM ${this.stats} WHERE MINUTE_MS >= ${b.bind(sinceMs)} GROUP BY MINUTE_MS ORDER BY MINUTE_MS`,
    );
  }

  private pruneBefore(table: string, column: string, beforeMs: number, limit: number): Statement {
    const b = new StatementBinder(this.d);
    return b.statement(
      deleteLimited(this.d, { table, where: `${column} < ${b.bind(beforeMs)}`, orderBy: column, limit }),
    );
  }
}
