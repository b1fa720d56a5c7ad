import type { TableSpec } from '@holdfast/core/kit';
import { FAILOVER_TABLES } from '@holdfast/failover';
import { SIMBA_TABLES } from '@holdfast/simba';
import { LOCKER_TABLES } from '@holdfast/locker';
import { INBOX_TABLES } from '@holdfast/inbox';

/**
 * Every table Holdfast owns, in creation order. `holdfast ddl --dialect <d>` prints them and
 * HOLDFAST_MIGRATIONS create them. Each module exports its TableSpecs (`<LIB>_TABLES`) for here.
 */
export const HOLDFAST_TABLES: readonly TableSpec[] = [
  FAILOVER_TABLES.store,
  SIMBA_TABLES.mutex,
  LOCKER_TABLES.lock,
  INBOX_TABLES.message,
  INBOX_TABLES.lease,
  INBOX_TABLES.group,
  INBOX_TABLES.history,
  INBOX_TABLES.stats,
  INBOX_TABLES.pause,
  INBOX_TABLES.rate,
];
