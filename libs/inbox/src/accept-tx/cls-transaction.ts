import type { EntityManager } from 'typeorm';

/** What the inbox uses of `@nestjs-cls/transactional`'s TransactionHost. */
interface TransactionHostLike {
  isTransactionActive(): boolean;
  readonly tx: unknown;
}

interface TransactionalPackage {
  TransactionHost: { getInstance(connectionName?: string): TransactionHostLike };
}

/** The package once looked up: null when the application does not have it. */
let transactional: TransactionalPackage | null | undefined;

function loadTransactional(): TransactionalPackage | null {
  if (transactional === undefined) {
    try {
      // An optional peer: only applications that use it have it installed.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      transactional = require('@nestjs-cls/transactional') as TransactionalPackage;
    } catch {
      transactional = null;
    }
  }
  return transactional;
}

/**
 * The EntityManager of the transaction `@nestjs-cls/transactional` (with its TypeORM adapter, the
 * default connection) has open in the current context, or undefined: the package is not installed,
 * its plugin is not registered, no transaction is active, or its transaction is not a TypeORM one.
 */
export function activeClsManager(): EntityManager | undefined {
  const pkg = loadTransactional();
  if (!pkg) return undefined;
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
