import type { TableSpec } from '@holdfast/core/kit';
import { FAILOVER_STORE_TABLE } from '@holdfast/failover/internal';
import { SIMBA_MUTEX_TABLE } from '@holdfast/simba/internal';
import { HOLDFAST_LOCK_TABLE } from '@holdfast/locker/internal';
import {
  COR_MESSAGE_TABLE,
  INBOX_GROUP_TABLE,
  INBOX_HISTORY_TABLE,
  INBOX_LEASE_TABLE,
  INBOX_STATS_TABLE,
  INBOX_PAUSE_TABLE,
  INBOX_RATE_TABLE,
} from '@holdfast/inbox/internal';

/**
 * Every table Holdfast owns, in creation order. `holdfast ddl --dialect <d>` prints them and
 * HOLDFAST_MIGRATIONS create them. Each module adds its TableSpec here.
 */
export const HOLDFAST_TABLES: readonly TableSpec[] = [
  FAILOVER_STORE_TABLE,
  SIMBA_MUTEX_TABLE,
  HOLDFAST_LOCK_TABLE,
  COR_MESSAGE_TABLE,
  INBOX_LEASE_TABLE,
  INBOX_GROUP_TABLE,
  INBOX_HISTORY_TABLE,
  INBOX_STATS_TABLE,
  INBOX_PAUSE_TABLE,
  INBOX_RATE_TABLE,
];
