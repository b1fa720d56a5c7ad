import type { EntityManager } from 'typeorm';

/** What the inbox uses of `@nestjs-cls/transactional`'s TransactionHost. */
interface TransactionHostLike {
  isTransactionActive(): boolean;
  readonly tx: unknown;
}

interface TransactionalPackage {
  TransactionHost: {
    getInstance(connectionName?: string): TransactionHostLike;
    /** Its registered hosts (a private static of the package): empty until its plugin is registered. */
    _instanceMap?: unknown;
  };
}

/** Where the package would load from: null when the application does not have it installed. */
let packagePath: string | null | undefined;

/**
 * The package when the application has loaded it (by registering its plugin), else null. It is
 * never loaded from here: loading it creates nestjs-cls's AsyncLocalStorage, which costs every
 * promise of a process that does not use it.
 */
function loadedTransactional(): TransactionalPackage | null {
  if (packagePath === undefined) {
    try {
      packagePath = require.resolve('@nestjs-cls/transactional');
    } catch {
      packagePath = null; // an optional peer: only applications that use it have it installed
    }
  }
  if (packagePath === null) return null;
  return (require.cache[packagePath]?.exports as TransactionalPackage | undefined) ?? null;
}

/**
 * The EntityManager of the transaction `@nestjs-cls/transactional` (with its TypeORM adapter, the
 * default connection) has open in the current context, or undefined: the package is not installed
 * or not loaded, its plugin is not registered, no transaction is active, or its transaction is not a TypeORM one.
 */
export function activeClsManager(): EntityManager | undefined {
  const pkg = loadedTransactional();
  if (!pkg) return undefined;
  // Without the plugin getInstance throws: a cheap look first, so that accepts in an application
  // that installed the package but does not register its plugin build no Error each.
  const registered = pkg.TransactionHost._instanceMap;
  if (registered instanceof Map && registered.size === 0) return undefined;
  let host: TransactionHostLike;
  try {
    host = pkg.TransactionHost.getInstance();
  } catch {
    return undefined; // ClsPluginTransactional not registered
  }
  if (!host.isTransactionActive()) return undefined;
  const tx = host.tx as Partial<EntityManager> | undefined;
  if (!tx || typeof tx !== 'object' || !('dataSource' in tx) || typeof tx.transaction !== 'function')
    return undefined;
  return tx as EntityManager;
}
