import type { Type } from '@nestjs/common';
import type { ModuleRef } from '@nestjs/core';
import { FailoverOverrides } from '../explorer/failover-overrides';
import type { DatabaseResolver } from '@holdfast/core/kit';
import type { ResolvedFailoverOptions, SqlStoreOptions } from '../failover.options';
import { PayloadCodec } from '../payload/payload-codec';
import type { FailoverStore } from './failover-store';
import { FailoverStoreQueryResolver } from './failover-store-query.resolver';
import { MemoryFailoverStore } from './memory-failover.store';
import { resolveCipher } from '../payload/payload-cipher';
import { EncryptingPayloadColumnResolver } from './encrypting-payload-column.resolver';
import { FailoverDatabase } from './failover-database';
import { PayloadColumnResolver } from './payload-column.resolver';
import { SqlFailoverStore } from './sql-failover.store';

function instance<T>(value: T | (new () => T) | undefined, fallback: T): T {
  if (value === undefined) return fallback;
  return typeof value === 'function' ? new (value as new () => T)() : value;
}

/** Builds the configured store. The SQL store finds its DataSource once the app is initialized. */
export async function createFailoverStore(
  options: ResolvedFailoverOptions,
  moduleRef: ModuleRef,
  codec: PayloadCodec,
  queries: FailoverStoreQueryResolver,
  payloadColumn: PayloadColumnResolver,
  databaseResolver: DatabaseResolver,
): Promise<FailoverStore> {
  const store = options.store;
  switch (store.type) {
    case 'memory':
      return new MemoryFailoverStore(store.maxEntries);
    case 'custom':
      if (store.useClass) return moduleRef.create(store.useClass);
      return lazyStore(() => moduleRef.get(store.useExisting!, { strict: false }));
    case 'sql':
      return createSqlStore(store as SqlStoreOptions, options.storeTimeout, moduleRef, codec, {
        queries,
        payloadColumn,
        databaseResolver,
      });
  }
}

/** The module's own parts of the SQL store, used where neither the options nor the app give one. */
interface ModuleParts {
  queries: FailoverStoreQueryResolver;
  payloadColumn: PayloadColumnResolver;
  databaseResolver: DatabaseResolver;
}

function createSqlStore(
  sqlOptions: SqlStoreOptions,
  storeTimeout: number,
  moduleRef: ModuleRef,
  codec: PayloadCodec,
  own: ModuleParts,
): SqlFailoverStore {
  // Set by `parts` when the store initializes, before the dialect is first asked for.
  let resolvedDatabase: DatabaseResolver | undefined;
  const database = new FailoverDatabase(
    moduleRef,
    () => resolvedDatabase ?? instance(sqlOptions.databaseResolver, own.databaseResolver),
    sqlOptions,
    (error) =>
      sqlStore.useFallback(
        `${error.message} Using portable INSERT/UPDATE statements with '?' placeholders.`,
        { unknownDialect: true },
      ),
    storeTimeout,
  );
  // Checked now: a bad key or cipher stops the bootstrap before anything else.
  const cipher = sqlOptions.encryption?.enabled ? resolveCipher(sqlOptions.encryption) : undefined;
  const part = <T>(option: T | Type<T> | undefined, token: Type<T> | undefined, fallback: T) =>
    resolvePart(moduleRef, option, token, fallback);
  const sqlStore = new SqlFailoverStore({
    sql: () => database.sql,
    maintenanceSql: () => database.maintenanceSql,
    tablePrefix: sqlOptions.tablePrefix,
    schema: sqlOptions.schema,
    rows: {
      atInit: async () => {
        resolvedDatabase = await part(sqlOptions.databaseResolver, undefined, own.databaseResolver);
        const column = await part(sqlOptions.payloadColumnResolver, PayloadColumnResolver, own.payloadColumn);
        return {
          queries: await part(sqlOptions.queryResolver, FailoverStoreQueryResolver, own.queries),
          payloadColumn: cipher ? new EncryptingPayloadColumnResolver(cipher, column) : column,
        };
      },
      codec,
    },
  });
  return sqlStore;
}

/**
 * A replaceable part of the SQL store, resolved when the store initializes (every provider of the
 * app exists by then): an instance option as given; a class option the app's provider of that
 * class, else built by Nest with its injected dependencies; no option: the app's own provider
 * under the part's token, else the module's. (No token for the DatabaseResolver: every Holdfast
 * module registers one of its own, so only its option is resolved this way.)
 */
async function resolvePart<T>(
  moduleRef: ModuleRef,
  option: T | Type<T> | undefined,
  token: Type<T> | undefined,
  fallback: T,
): Promise<T> {
  // The module's own FailoverOverrides (built by then: the store initializes after bootstrap).
  const overrides = moduleRef.get(FailoverOverrides, { strict: true });
  if (option !== undefined && typeof option !== 'function') return option;
  if (option !== undefined)
    return overrides.find<T>(option as Type<T>) ?? (await moduleRef.create(option as Type<T>));
  return (token && overrides.find<T>(token)) ?? fallback;
}

/** A store resolved on first use (for `useExisting`, whose provider may not exist yet). */
function lazyStore(get: () => FailoverStore): FailoverStore {
  let target: FailoverStore | undefined;
  const t = () => (target ??= get());
  return {
    get description() {
      return t().description;
    },
    store: (entry, type) => t().store(entry, type),
    storeMany: async (items) => {
      const store = t();
      if (store.storeMany) return store.storeMany(items);
      for (const item of items) await store.store(item.entry, item.type);
    },
    find: (name, key, type) => t().find(name, key, type),
    findAll: (name, type) => (t().findAll ? t().findAll!(name, type) : Promise.resolve([])),
    countLive: (name, now) => {
      const store = t();
      if (!store.countLive)
        return Promise.reject(new Error(`${store.description ?? 'this store'} cannot count entries`));
      return store.countLive(name, now);
    },
    delete: (name, key) => t().delete(name, key),
    cleanByExpiry: (expiry, options) => t().cleanByExpiry(expiry, options),
    claimCleanup: (leaseMs, owner) =>
      t().claimCleanup ? t().claimCleanup!(leaseMs, owner) : Promise.resolve(true),
    now: () => (t().now ? t().now!() : Promise.resolve(new Date())),
    clock: () => (t().clock ? t().clock!() : Date.now()),
    ping: () => (t().ping ? t().ping!() : Promise.resolve()),
  };
}
