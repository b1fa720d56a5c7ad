import { Inject } from '@nestjs/common';
import { FAILOVER_RESOLVED_OPTIONS, getFailoverStoreToken } from './failover.constants';

/**
 * Injects the active `FailoverStore` (the SQL, memory or custom store the module was given), as
 * `@InjectDataSource()` injects TypeORM's DataSource: `constructor(@InjectFailoverStore() store: FailoverStore)`.
 */
export const InjectFailoverStore = (): ParameterDecorator & PropertyDecorator =>
  Inject(getFailoverStoreToken());

/** Injects the validated, defaulted options of `FailoverModule` (`ResolvedFailoverModuleOptions`). */
export const InjectFailoverOptions = (): ParameterDecorator & PropertyDecorator =>
  Inject(FAILOVER_RESOLVED_OPTIONS);
