import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import {
  DatabaseResolver,
  declarePoolNeed,
  HoldfastDatabase,
  LEASE_LANE,
  parseDuration,
  SchemaManager,
  type CoordinationLane,
  type LiveTable,
  type SqlClient,
  type SqlClientOptions,
  type TableSpec,
  tableName,
} from '@holdfast/core/kit';
import { CompetingLeadership, type InboxLeadership } from '../cluster/inbox-leadership';
import { SimbaLeadership } from '../cluster/simba-leadership';
import {
  InboxClusterModeError,
  InboxFairShareError,
  InboxNotifyUnsupportedError,
  InboxPriorityColumnError,
  RateTableMissingError,
} from '../errors';
import { resolveRateLimits, type ResolvedRateLimit } from '../options/rate-limits';
import { inboxNotifyChannel } from '../notify/notify-channel';
import { INBOX_OPTIONS } from '../inbox.tokens';
import type { ResolvedInboxOptions } from '../options/resolved-inbox-options';
import type { CorMessageAccept } from './cor-message.accept';
import type { CorMessageCompletion } from './cor-message.completion';
import { CorMessageStore } from './cor-message.store';
import { COR_MESSAGE_TABLE } from './cor-message.table';
import { carriesTraceContext, withTraceContextColumn } from './cor-message.trace-context';
import {
  addPriorityColumnSql,
  COR_MESSAGE_PRIORITY_COLUMN,
  corMessageSpecWithPriority,
  detectPriorityLayout,
} from './cor-message.priority';
import { corMessageSpecWithTypeIndex, detectFairShareLayout } from './cor-message.fair-share';
import { INBOX_GROUP_TABLE } from './inbox-group.table';
import { INBOX_LEASE_TABLE } from './inbox-lease.table';
import { InboxPauseStatements } from './inbox-pause.statements';
import { INBOX_PAUSE_TABLE } from './inbox-pause.table';
import { supportsListenNotify } from './inbox-sql.dialect';
import { InboxRateStatements } from './inbox-rate.statements';
import { INBOX_RATE_TABLE } from './inbox-rate.table';

const tableNameOf = (prefix: string) => tableName(prefix, COR_MESSAGE_TABLE.name);

/** The deletes' lane (see openDeleteLane): a claim's two deletes side by side. */
const DELETE_LANE_CONNECTIONS = 2;

/**
 * The inbox's way to its database (core's HoldfastDatabase: the DataSource is looked up on first
 * use, at the latest in onModuleInit, where the tables are also created or checked). A delivering
 * node's statements go to connections of Holdfast's own (ConnectionBudget): its claims,
 * completions, cleanups and the admin's on its own lane, its heartbeats on the lease lane (a
 * heartbeat never waits behind a claim), its accepts on the application's pool. An accept-only
 * node opens nothing of its own.
 */
@Injectable()
export class InboxConnection extends HoldfastDatabase implements OnModuleInit {
  private readonly logger = new Logger(InboxConnection.name);
  /** The statements on the inbox's lane, the heartbeats on the lease lane, the accepts on the application's pool. */
  private stores?: {
    coordination: CorMessageStore;
    heartbeats: CorMessageStore;
    application: CorMessageStore;
  };
  private _leadership?: InboxLeadership;
  /** Undefined until onModuleInit, or when the pause table is missing (schema not 'create'). */
  private _pauses?: InboxPauseStatements;
  /** Set when `rateLimits` limits a type (see openRates). */
  private _rates?: { limits: ReadonlyMap<string, ResolvedRateLimit>; statements: InboxRateStatements };

  constructor(
    moduleRef: ModuleRef,
    resolver: DatabaseResolver,
    @Inject(INBOX_OPTIONS) private readonly options: ResolvedInboxOptions,
  ) {
    super(moduleRef, resolver, 'InboxModule', options);
  }

  async onModuleInit(): Promise<void> {
    const { traceContext, fairShare } = this.options;
    const rateLimits = resolveRateLimits(this.options.rateLimits);
    if (fairShare && this.options.groupBy) throw new InboxFairShareError('groupBy');
    if (fairShare && this.options.priorities) throw new InboxFairShareError('priorities');
    const spec = this.options.priorities ? corMessageSpecWithPriority(false) : COR_MESSAGE_TABLE;
    const live = await this.applySchema(traceContext === false ? spec : withTraceContextColumn(spec));
    const { coordination, heartbeats, application } = this.storesOnce();
    const carries = carriesTraceContext(traceContext, live);
    for (const store of [coordination, heartbeats, application]) store.configure({ traceContext: carries });
    if (traceContext === 'when-present' && !carries)
      this.logger.log(
        `${application.table} has no TRACE_CONTEXT column: deliveries do not carry the accepting trace context`,
      );
    // A startup read, on the application's pool: the other stores learn the same layout.
    await application
      .detectLayout()
      .catch((error: Error) =>
        this.logger.warn(`Could not read the layout of ${application.table}: ${error.message}`),
      );
    for (const store of [coordination, heartbeats])
      store.configure({ t: application.on.t, hasOrderIndex: application.on.hasOrderIndex });
    if (this.options.priorities) await this.enablePriorities(live, [application, coordination, heartbeats]);
    if (fairShare) await this.enableFairShare(fairShare.perKey, [application, coordination, heartbeats]);
    const leadership = this.leadership;
    // Competing nodes take turns at the expiry cleanup through a row of their own table.
    if (this.options.deliver && leadership.mode === 'competing') {
      await this.applySchema(INBOX_LEASE_TABLE);
    }
    // groupBy: every node (accepting or delivering) needs the group table, created or checked.
    if (this.options.groupBy) {
      await this.applySchema(INBOX_GROUP_TABLE);
    }
    await this.openPauses();
    if (rateLimits && this.options.deliver) await this.openRates(rateLimits);
    // A delivering node on the application's pool (coordinationPool false): a claim, and a
    // heartbeat or a completion delete beside it.
    if (this.options.deliver)
      declarePoolNeed(this.sql, { component: `inbox (${this.store.table})`, connections: 2 });
    void this.notifyChannel; // notify: true on a database without LISTEN/NOTIFY stops startup here
    this.logger.log(
      `Inbox on ${this.sql.dialect.name} (${this.store.table}), cluster mode '${leadership.mode}'` +
        (this.options.deliver ? '' : ', accept only'),
    );
  }

  /**
   * `priorities: true`: the table must have the opt-in PRIORITY column (InboxPriorityColumnError
   * with the migration and its DDL otherwise); then its index is created or checked as the
   * schema mode says, and every store orders its claims by it.
   */
  private async enablePriorities(live: LiveTable, stores: readonly CorMessageStore[]): Promise<void> {
    const { tablePrefix } = this.options;
    if (live.exists && live.verified && !live.has(COR_MESSAGE_PRIORITY_COLUMN.name)) {
      const ddl = addPriorityColumnSql(this.sql.dialect, tablePrefix).join('; ');
      throw new InboxPriorityColumnError(tableNameOf(tablePrefix), ddl);
    }
    await this.applySchema(corMessageSpecWithPriority(true));
    const layout = await detectPriorityLayout(stores[0].sql, tablePrefix);
    for (const store of stores) store.configure({ priority: layout });
  }

  /**
   * `fairShare`: the type index is created (`schema: 'create'`) or checked (a warning with its
   * DDL when missing: claims then work, by a scan), and every store claims fairly.
   */
  private async enableFairShare(perKey: number, stores: readonly CorMessageStore[]): Promise<void> {
    await this.applySchema(corMessageSpecWithTypeIndex());
    const layout = await detectFairShareLayout(stores[0].sql, this.options.tablePrefix, perKey);
    for (const store of stores) store.configure({ fairShare: layout });
  }

  /** Creates or checks a table of the inbox's opt-in parts (history, stats) under its prefix and schema mode. */
  async ensureTable(table: TableSpec): Promise<void> {
    await this.applySchema(table);
  }

  /**
   * The table of paused types: created with `schema: 'create'`, else checked when it exists. An
   * inbox without it (`check` or `none`, the migration not run yet) pauses no type: pauseType
   * says so, and claims never read it.
   */
  private async openPauses(): Promise<void> {
    const table = this.pauseTable;
    if (this.options.schema !== 'create') {
      const schema = new SchemaManager(this.applicationSql);
      if (!(await schema.tableExists(table))) {
        this.logger.log(`No ${table}: message types cannot be paused until the Holdfast migrations run`);
        return;
      }
    }
    await this.applySchema(INBOX_PAUSE_TABLE);
    this._pauses = new InboxPauseStatements(this.sql, table, this.notifyChannel);
  }

  /**
   * `rateLimits`: the permit table, created with `schema: 'create'`, else checked; missing, the
   * inbox does not start (RateTableMissingError names the migration): a limit it cannot keep is
   * not silently dropped.
   */
  private async openRates(limits: ReadonlyMap<string, ResolvedRateLimit>): Promise<void> {
    const table = tableName(this.options.tablePrefix, INBOX_RATE_TABLE.name);
    if (this.options.schema !== 'create') {
      const schema = new SchemaManager(this.applicationSql);
      if (!(await schema.tableExists(table))) throw new RateTableMissingError(table);
    }
    await this.applySchema(INBOX_RATE_TABLE);
    this._rates = { limits, statements: new InboxRateStatements(this.sql, table) };
  }

  /** The rate limits by type name and their permit statements, or undefined when no type is limited. */
  get rates():
    { limits: ReadonlyMap<string, ResolvedRateLimit>; statements: InboxRateStatements } | undefined {
    return this._rates;
  }

  /** The paused types' statements, or undefined when the inbox has no pause table (see openPauses). */
  get pauses(): InboxPauseStatements | undefined {
    return this._pauses;
  }

  /** The pause table's name (whether it exists or not). */
  get pauseTable(): string {
    return tableName(this.options.tablePrefix, INBOX_PAUSE_TABLE.name);
  }

  /**
   * Opens the lane of this node's completion deletes while it delivers a backlog (see
   * CompletionLanes): two connections more, admitted within the connection budget at once or refused
   * with ConnectionBudgetError (never waiting for room). Its delete statements, or undefined where
   * the inbox has no lanes (SQLite, `coordinationPool: false`).
   */
  async openDeleteLane(): Promise<CorMessageCompletion | undefined> {
    const table = tableNameOf(this.options.tablePrefix);
    const lane = {
      key: `inbox-deletes:${table}`,
      what: `inbox ${table} (deletes while delivering a backlog)`,
      size: DELETE_LANE_CONNECTIONS,
    };
    const sql = await this.openLaneOnDemand(lane);
    return sql && this.store.through(sql).completion;
  }

  /** Closes the lane of {@link openDeleteLane} (its deletes are done). */
  async closeDeleteLane(deletes: CorMessageCompletion): Promise<void> {
    await this.closeLaneOnDemand(deletes.sql);
  }

  /** The inbox's own lane: its claims and completions wait only for each other. */
  protected override coordinationLane(): CoordinationLane {
    const table = tableNameOf(this.options.tablePrefix);
    return { key: `inbox:${table}`, what: `inbox ${table} (claims, completions)` };
  }

  /** An accept-only node's statements are its callers' own work: they stay on the application's pool. */
  protected override usesCoordinationPool(): boolean {
    return this.options.deliver;
  }

  /**
   * The bounds of the inbox's client. Its transactions (claims) are bounded on the server: a claim
   * never needs to sit idle for long, so the bound stays within the lease, and a silent node's batch
   * goes to another within visibilityTimeout + the bound at the latest. Each of its waits is bounded on
   * this side by `statementTimeout`: a connection that stops answering is destroyed.
   */
  protected override clientOptions(): SqlClientOptions {
    const idle = parseDuration(this.options.idleInTransactionTimeout, 'idleInTransactionTimeout');
    const lease = parseDuration(this.options.visibilityTimeout, 'visibilityTimeout');
    const bound = parseDuration(this.options.statementTimeout, 'statementTimeout');
    return {
      idleInTransactionTimeout: idle > 0 ? Math.min(idle, lease) : 0,
      // Every wait on the database bounded on this side too: a silenced connection is
      // destroyed, and the delivery loop goes on, instead of waiting for an answer forever.
      statementTimeout: bound,
    };
  }

  /**
   * The inbox's statements on its coordination lane: claims, completions, hand-backs, cleanups and
   * the admin's, where the application's load cannot delay them past the lease (#31).
   */
  get store(): CorMessageStore {
    return this.storesOnce().coordination;
  }

  /**
   * The heartbeats' statements, on the lease lane: a heartbeat is one short UPDATE that keeps the
   * claims, so it never waits behind a claim or a delete on the inbox's own lane.
   */
  get heartbeats(): CorMessageCompletion {
    return this.storesOnce().heartbeats.completion;
  }

  /**
   * The accepts' statements (`insert`, `existingIds`): the application's own work, at its rate, on
   * the application's pool, so that a burst of them cannot queue in front of a heartbeat.
   */
  get accept(): CorMessageAccept {
    return this.storesOnce().application.accept;
  }

  /** The client on the application's pool (its DataSource is the one a caller's transaction must be on). */
  get acceptClient(): SqlClient {
    return this.applicationSql;
  }

  private storesOnce(): {
    coordination: CorMessageStore;
    heartbeats: CorMessageStore;
    application: CorMessageStore;
  } {
    if (!this.stores) {
      const build = (sql: SqlClient) => {
        const store = new CorMessageStore(sql, this.options.tablePrefix, this.options.retry.maxRetries);
        store.configure({
          notifyChannel: this.notifyChannel,
          groupTable: this.options.groupBy
            ? tableName(this.options.tablePrefix, INBOX_GROUP_TABLE.name)
            : undefined,
        });
        return store;
      };
      const coordination = build(this.sql);
      const leaseSql = this.laneSql(LEASE_LANE);
      const heartbeats = leaseSql === this.sql ? coordination : build(leaseSql);
      const applicationSql = this.applicationSql;
      const application = applicationSql === this.sql ? coordination : build(applicationSql);
      this.stores = { coordination, heartbeats, application };
    }
    return this.stores;
  }

  /**
   * The LISTEN/NOTIFY channel when `notify` is on (by default on PostgreSQL), else undefined.
   * Throws InboxNotifyUnsupportedError for `notify: true` on another database.
   */
  get notifyChannel(): string | undefined {
    const dialect = this.sql.dialect;
    if (this.options.notify === true && !supportsListenNotify(dialect))
      throw new InboxNotifyUnsupportedError(dialect.name);
    if (this.options.notify === false || !supportsListenNotify(dialect)) return undefined;
    return inboxNotifyChannel(tableNameOf(this.options.tablePrefix));
  }

  /**
   * 'competing' (default where SKIP LOCKED exists) or 'leader' (the only mode on SQLite, whose
   * single writer lock cannot skip locked rows).
   */
  get leadership(): InboxLeadership {
    if (!this._leadership) {
      const dialect = this.sql.dialect;
      const mode = this.options.cluster ?? (dialect.supportsSkipLocked ? 'competing' : 'leader');
      if (mode === 'competing' && !dialect.supportsSkipLocked) {
        throw new InboxClusterModeError(
          mode,
          `${dialect.name} has no SELECT … FOR UPDATE SKIP LOCKED; use cluster: 'leader' (with SimbaModule).`,
        );
      }
      this._leadership =
        mode === 'competing'
          ? new CompetingLeadership()
          : new SimbaLeadership(this.moduleRef, this.options.leaderMutex);
    }
    return this._leadership;
  }
}
