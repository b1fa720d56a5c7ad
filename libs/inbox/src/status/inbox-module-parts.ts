import type { TableSpec } from '@holdfast/core/kit';
import type { Type } from '@nestjs/common';
import { DEFAULT_INBOX_NAME } from '../inbox.constants';
import { INBOX_NAME } from '../inbox.tokens';
import { InboxClock } from '../inbox.clock';
import { COR_MESSAGE_TABLE } from '../store/cor-message.table';
import { INBOX_LEASE_TABLE } from '../store/inbox-lease.table';
import { INBOX_GROUP_TABLE } from '../store/inbox-group.table';
import { INBOX_HISTORY_TABLE, INBOX_STATS_TABLE } from '../history/inbox-history.tables';
import { INBOX_PAUSE_TABLE } from '../store/inbox-pause.table';
import { INBOX_RATE_TABLE } from '../store/inbox-rate.table';

/**
 * The inbox's tables, by role, in creation order: for `holdfast ddl`, migrations, tools and tests
 * that create them. `history` and `stats` exist when those options are on, `rate` with `rateLimits`.
 */
export const INBOX_TABLES: {
  readonly message: TableSpec;
  readonly lease: TableSpec;
  readonly group: TableSpec;
  readonly history: TableSpec;
  readonly stats: TableSpec;
  readonly pause: TableSpec;
  readonly rate: TableSpec;
} = Object.freeze({
  message: COR_MESSAGE_TABLE,
  lease: INBOX_LEASE_TABLE,
  group: INBOX_GROUP_TABLE,
  history: INBOX_HISTORY_TABLE,
  stats: INBOX_STATS_TABLE,
  pause: INBOX_PAUSE_TABLE,
  rate: INBOX_RATE_TABLE,
});

/**
 * What a tool that reads a running InboxModule (the dashboard) looks up in the application:
 * `name` is provided by each module instance with its name (`defaultName` for the module without
 * one), `clock` is that inbox's notion of now (the database clock, or the `clock` option).
 */
export const INBOX_STATUS_TOKENS: {
  readonly name: symbol;
  readonly defaultName: string;
  readonly clock: Type<Pick<InboxClock, 'now'>>;
} = Object.freeze({ name: INBOX_NAME, defaultName: DEFAULT_INBOX_NAME, clock: InboxClock });
