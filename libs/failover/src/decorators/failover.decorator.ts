import { Inject, Optional } from '@nestjs/common';
import { wrapMethod } from '@holdfast/core/kit';
import { FailoverConfigurationError } from '../errors';
import { FailoverExecutor } from '../executor/failover-executor';
import { FAILOVER_METADATA } from '../failover.constants';
import { FAILOVER_STORES, failoverExecutorProperty, getFailoverToken } from '../failover.tokens';
import { failoverMetadata, type FailoverOptions } from './failover-options';

/**
 * Serves the last good value when the upstream call fails. The method is wrapped here, at
 * decoration time, so calls from other providers and the class's own `this.` calls both go
 * through it (an interceptor would see neither). The executor arrives by property injection:
 * a provider using @Failover() in an app without FailoverModule fails at bootstrap. With
 * `store: name`, the executor of the FailoverModule registered with that name is injected (into a
 * property of its own, so one class may use several stores); the explorer reports a store that no
 * module registers at bootstrap. Either way the store is resolved once, never per call.
 */
export function Failover(options: FailoverOptions): MethodDecorator {
  return (target, propertyKey, descriptor: PropertyDescriptor) => {
    const where = `${target.constructor.name}.${String(propertyKey)}`;
    const meta = failoverMetadata(options, where);
    if (typeof descriptor.value !== 'function')
      throw new FailoverConfigurationError(`@Failover() on ${where}: not a method`);
    const property = failoverExecutorProperty(meta.store);
    if (FAILOVER_STORES.isDefault(meta.store)) {
      Inject(FailoverExecutor)(target, property);
    } else {
      // Optional: a store no module registers is reported by the explorer, with a typed error.
      Inject(getFailoverToken(FailoverExecutor, meta.store))(target, property);
      Optional()(target, property);
    }
    const missing = FAILOVER_STORES.isDefault(meta.store)
      ? 'with FailoverModule imported'
      : `with a FailoverModule named '${meta.store}' imported`;

    const wrapped = wrapMethod<Record<symbol, FailoverExecutor | undefined> | undefined>(
      descriptor,
      (instance, upstream, args) => {
        const executor = instance?.[property];
        if (!executor) {
          return Promise.reject(
            new FailoverConfigurationError(
              `${where} is decorated with @Failover('${meta.name}') but its instance was not created by Nest ` +
                `${missing} (was it created with 'new'?).`,
            ),
          );
        }
        return executor.execute(meta, instance, upstream, args);
      },
    );
    Reflect.defineMetadata(FAILOVER_METADATA, meta, wrapped);
    return descriptor;
  };
}
