import type { TableSpec } from '@holdfast/core/kit';
import { SIMBA_OPTIONS } from '../simba.tokens';
import { SIMBA_MUTEX_TABLE } from '../store/simba-mutex.table';

/** Simba's tables, by role: for `holdfast ddl`, migrations, tools and tests that create them. */
export const SIMBA_TABLES: { readonly mutex: TableSpec } = Object.freeze({ mutex: SIMBA_MUTEX_TABLE });

/**
 * What a tool that reads a running SimbaModule (the dashboard) looks up in the application: its
 * resolved options (the DataSource and table prefix of its table). MutexContendRegistry, public,
 * says what this instance contends for.
 */
export const SIMBA_STATUS_TOKENS: { readonly options: symbol } = Object.freeze({ options: SIMBA_OPTIONS });
