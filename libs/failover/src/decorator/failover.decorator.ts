import { Inject } from '@nestjs/common';
import { FailoverConfigurationError } from '../errors';
import { FailoverExecutor } from '../executor/failover-executor';
import { FAILOVER_EXECUTOR_PROPERTY, FAILOVER_METADATA } from '../failover.constants';
import { failoverMetadata, type FailoverOptions } from './failover-options';

/**
 * Serves the last good value when the upstream call fails. The method is wrapped here, at
 * decoration time, so calls from other providers and the class's own `this.` calls both go
 * through it (an interceptor would see neither). The executor arrives by property injection:
 * a provider using @Failover() in an app without FailoverModule fails at bootstrap.
 */
export function Failover(options: FailoverOptions): MethodDecorator {
  return (target, propertyKey, descriptor: PropertyDescriptor) => {
    const where = `${target.constructor.name}.${String(propertyKey)}`;
    const meta = failoverMetadata(options, where);
    const upstream = descriptor.value;
    if (typeof upstream !== 'function')
      throw new FailoverConfigurationError(`@Failover() on ${where}: not a method`);
    Inject(FailoverExecutor)(target, FAILOVER_EXECUTOR_PROPERTY);

    const wrapped = function (this: Record<symbol, FailoverExecutor | undefined>, ...args: unknown[]) {
      const executor = this?.[FAILOVER_EXECUTOR_PROPERTY];
      if (!executor) {
        return Promise.reject(
          new FailoverConfigurationError(
            `${where} is decorated with @Failover('${meta.name}') but its instance was not created by Nest ` +
              `with FailoverModule imported (was it created with 'new'?).`,
          ),
        );
      }
      return executor.execute(meta, this, upstream, args);
    };
    Object.defineProperty(wrapped, 'name', { value: upstream.name });
    for (const key of Reflect.getMetadataKeys(upstream)) {
      Reflect.defineMetadata(key, Reflect.getMetadata(key, upstream), wrapped);
    }
    Reflect.defineMetadata(FAILOVER_METADATA, meta, wrapped);
    descriptor.value = wrapped;
    return descriptor;
  };
}
