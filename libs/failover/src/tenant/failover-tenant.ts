import { AsyncLocalStorage } from 'node:async_hooks';

const storage = new AsyncLocalStorage<string>();

/**
 * The default tenant context: `FailoverTenant.run('acme', () => ...)` makes every @Failover call
 * inside (however deep, across awaits) use tenant 'acme'. With nestjs-cls, pass
 * `resolveTenant: () => ClsServiceManager.getClsService().get('tenantId')` instead.
 */
export const FailoverTenant = {
  run<T>(tenant: string, work: () => T): T {
    return storage.run(tenant, work);
  },
  current(): string | undefined {
    return storage.getStore();
  },
};
