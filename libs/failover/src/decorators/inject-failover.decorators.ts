import { Inject } from '@nestjs/common';
import { FailoverExecutor } from '../executor/failover-executor';
import { getFailoverOptionsToken, getFailoverStoreToken, getFailoverToken } from '../failover.tokens';

type InjectDecorator = ParameterDecorator & PropertyDecorator;

/**
 * Injects the active `FailoverStore` (the SQL, memory or custom store the module was given), as
 * `@InjectDataSource()` injects TypeORM's DataSource: `constructor(@InjectFailoverStore() store: FailoverStore)`;
 * with a name, the store of the FailoverModule registered with that `name`.
 */
export const InjectFailoverStore = (name?: string): InjectDecorator => Inject(getFailoverStoreToken(name));

/**
 * Injects the validated, defaulted options of `FailoverModule` (`ResolvedFailoverOptions`);
 * with a name, those of the module registered with that `name`.
 */
export const InjectFailoverOptions = (name?: string): InjectDecorator =>
  Inject(getFailoverOptionsToken(name));

/** Injects the `FailoverExecutor` of the FailoverModule registered with `name` (the default one without). */
export const InjectFailoverExecutor = (name?: string): InjectDecorator =>
  Inject(getFailoverToken(FailoverExecutor, name));
