import type { Provider } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import {
  DatabaseResolver,
  SchemaManager,
  SqlClient,
  resolveDataSource,
  sqlClientFor,
  validateOptions,
} from '@holdfast/core';
import { CompetingLeadership, type InboxLeadership } from './cluster/inbox-leadership';
import { SimbaLeadership } from './cluster/simba-leadership';
import { InboxClusterModeError } from './errors';
import { INBOX_LEADERSHIP, INBOX_OPTIONS, INBOX_SQL_CLIENT } from './inbox.constants';
import { INBOX_MODULE_OPTIONS } from './inbox.module-definition';
import { InboxRetryOptionsDto, ResolvedInboxOptions, type InboxModuleOptions } from './inbox.options';
import { CorMessageQueries } from './store/cor-message.queries';
import { COR_MESSAGE_TABLE } from './store/cor-message.table';

/** Defaults merged and validated in one place, for forRoot and forRootAsync alike. */
export function resolveInboxOptions(options: InboxModuleOptions): ResolvedInboxOptions {
  const plain = Object.fromEntries(Object.entries(options ?? {}).filter(([, v]) => v !== undefined));
  if (plain.retry && typeof plain.retry === 'object') {
    const given = Object.entries(plain.retry).filter(([, v]) => v !== undefined);
    plain.retry = Object.assign(new InboxRetryOptionsDto(), Object.fromEntries(given));
  }
  return validateOptions(ResolvedInboxOptions, plain, 'InboxModule');
}

export const inboxOptionsProvider: Provider = {
  provide: INBOX_OPTIONS,
  useFactory: resolveInboxOptions,
  inject: [INBOX_MODULE_OPTIONS],
};

export const inboxSqlClientProvider: Provider = {
  provide: INBOX_SQL_CLIENT,
  useFactory: (moduleRef: ModuleRef, options: ResolvedInboxOptions, resolver: DatabaseResolver) =>
    sqlClientFor(resolveDataSource(moduleRef, options.dataSource, 'InboxModule'), resolver, options.dialect),
  inject: [ModuleRef, INBOX_OPTIONS, DatabaseResolver],
};

/** The query resolver, after the table was created or checked (schema option). */
export const inboxQueriesProvider: Provider = {
  provide: CorMessageQueries,
  useFactory: async (sql: SqlClient, options: ResolvedInboxOptions) => {
    await new SchemaManager(sql).apply(COR_MESSAGE_TABLE, options.tablePrefix, options.schema);
    return new CorMessageQueries(sql, options.tablePrefix);
  },
  inject: [INBOX_SQL_CLIENT, INBOX_OPTIONS],
};

/**
 * The cluster mode: 'competing' (default where SKIP LOCKED exists) or 'leader' (the only mode on
 * SQLite, whose single writer lock cannot skip locked rows).
 */
export const inboxLeadershipProvider: Provider = {
  provide: INBOX_LEADERSHIP,
  useFactory: (sql: SqlClient, options: ResolvedInboxOptions, moduleRef: ModuleRef): InboxLeadership => {
    const mode = options.cluster ?? (sql.dialect.supportsSkipLocked ? 'competing' : 'leader');
    if (mode === 'competing') {
      if (!sql.dialect.supportsSkipLocked) {
        throw new InboxClusterModeError(
          mode,
          `${sql.dialect.name} has no SELECT … FOR UPDATE SKIP LOCKED; use cluster: 'leader' (with SimbaModule).`,
        );
      }
      return new CompetingLeadership();
    }
    return new SimbaLeadership(moduleRef, options.leaderMutex);
  },
  inject: [INBOX_SQL_CLIENT, INBOX_OPTIONS, ModuleRef],
};
