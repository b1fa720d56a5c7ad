import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import {
  DatabaseResolver,
  declarePoolNeed,
  findSchedulerRegistry,
  HoldfastDatabase,
  HoldfastTimers,
  type SqlClientOptions,
} from '@holdfast/core/kit';
import { SIMBA_OPTIONS } from '../simba.tokens';
import type { ResolvedSimbaOptions } from '../simba.options';
import { SIMBA_MUTEX_TABLE } from '../store/simba-mutex.table';
import { MutexQueryResolver } from '../store/mutex-query.resolver';
import { MutexRepository } from './mutex.repository';

/**
 * The module's way to the database (core's HoldfastDatabase: the DataSource is looked up once
 * every provider exists): the SqlClient and query resolver, and `simba_mutex` created or checked
 * at startup.
 */
@Injectable()
export class SimbaConnection extends HoldfastDatabase implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(SimbaConnection.name);
  private _repository?: MutexRepository;

  constructor(
    moduleRef: ModuleRef,
    resolver: DatabaseResolver,
    @Inject(SIMBA_OPTIONS) private readonly options: ResolvedSimbaOptions,
  ) {
    super(moduleRef, resolver, 'SimbaModule', options);
  }

  async onModuleInit(): Promise<void> {
    // Disabled: the DataSource is not even looked up (it may not exist where Simba is off).
    if (!this.options.enabled) return;
    const repository = this.repository;
    // Core's schema check refuses a table the code cannot use; the live owner_id length bounds
    // the contender ids (CHAR(32) in Simba's DDL). SQLite enforces no length, so none is known there.
    const live = await this.applySchema(SIMBA_MUTEX_TABLE);
    repository.ownerIdColumnLength = live.column('owner_id')?.length;
    // One batched tick transaction at a time per module instance.
    declarePoolNeed(repository.sql, { component: `simba (${repository.queries.table})`, connections: 1 });
    await this.checkBusyTimeout(repository);
    this.logger.log(
      `simba_mutex ready on ${repository.sql.dialect.name} (${repository.queries.table}); ttl ${this.options.ttl} ms, ` +
        `transition ${this.options.transition} ms, statement timeout ${this.options.statementTimeout} ms` +
        (repository.ownerIdColumnLength
          ? `, owner_id up to ${repository.ownerIdColumnLength} characters`
          : ''),
    );
  }

  /**
   * Last: the contenders have stopped; a tick or deadline still armed would find nothing to do.
   * Then the coordination pool closes.
   */
  override async onApplicationShutdown(): Promise<void> {
    this._repository?.timers.clearAll();
    await super.onApplicationShutdown();
  }

  /** SQLite waits for the write lock synchronously: warn when that wait can outlast the transition. */
  private async checkBusyTimeout(repository: MutexRepository): Promise<void> {
    const pragma = repository.queries.busyTimeout();
    if (!pragma) return;
    const [row] = await repository.sql.query<Record<string, unknown>>(pragma);
    const busy = Number(Object.values(row ?? {})[0]);
    if (Number.isFinite(busy) && busy >= this.options.transition) {
      this.logger.warn(
        `SQLite busy timeout is ${busy} ms, not shorter than the transition (${this.options.transition} ms): ` +
          `a write-lock wait can outlast it. Set the DataSource's 'timeout' below the transition.`,
      );
    }
  }

  /**
   * A tick's transaction sends its statements back to back: an owner frozen inside one (a
   * stopped VM, a dead link) is ended by the server after about one statement timeout, so the
   * mutex changes hands within ttl + transition + that, on MariaDB too (PostgreSQL also gets
   * the statement timeout itself). MariaDB counts whole seconds.
   *
   * The client bounds each of its own waits by the same statement timeout (#43): the tick's
   * bound alone only stops waiting, and a connection that went silent (a firewall that lost its
   * state) stayed checked out with a statement that never answers. Two of them filled Simba's
   * pool, and the instance never contended again. Bounded, such a connection is destroyed, and
   * the pooled ones that have not answered since are not reused.
   */
  protected override clientOptions(): SqlClientOptions {
    return {
      idleInTransactionTimeout: Math.max(1_000, this.options.statementTimeout),
      // Each wait bounded on this side too: the lease lane is one connection that the lockers and
      // the inbox's heartbeats share, so a connection that stops answering is destroyed (and the
      // lane opens another) instead of holding every lease statement of the process.
      statementTimeout: this.options.statementTimeout,
    };
  }

  get repository(): MutexRepository {
    if (!this._repository) {
      const sql = this.sql;
      this._repository = new MutexRepository(
        sql,
        new MutexQueryResolver(sql.dialect, this.options.tablePrefix),
        this.options.statementTimeout,
        new HoldfastTimers(findSchedulerRegistry(this.moduleRef)),
      );
    }
    return this._repository;
  }
}
