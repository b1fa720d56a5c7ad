import { Inject } from '@nestjs/common';
import { wrapMethod } from '@holdfast/core/kit';
import { LeaderOnlyNotWiredError } from '../errors';
import { assertUserMutexName } from '../mutex/mutex-contender';
import { MutexContendRegistry } from '../mutex/mutex-contend.registry';
import { LEADER_ONLY } from '../simba.constants';

const REGISTRY = Symbol('holdfast:simba:registry');

/**
 * Runs the method only on the application instance that currently owns `mutex`; elsewhere the
 * call returns undefined without running the body. Meant for `@Cron`/`@Interval`/`@Timeout`
 * methods of @nestjs/schedule, in either decorator order: the method is wrapped at decoration
 * time and the original's metadata is copied, so the scheduler still finds it. Works for
 * provider-to-provider and self calls too. SimbaModule contends for `mutex` from bootstrap on.
 */
export function LeaderOnly(mutex: string): MethodDecorator {
  assertUserMutexName(mutex);
  return (target, propertyKey, descriptor) => {
    Inject(MutexContendRegistry)(target, REGISTRY);
    const method = `${target.constructor.name}.${String(propertyKey)}`;
    const previous: unknown = descriptor.value;
    const mutexes: string[] =
      (typeof previous === 'function' ? Reflect.getMetadata(LEADER_ONLY, previous) : undefined) ?? [];
    const wrapped = wrapMethod<Record<symbol, MutexContendRegistry | undefined>>(
      descriptor,
      (instance, original, args) => {
        const registry = instance[REGISTRY];
        if (!registry) throw new LeaderOnlyNotWiredError(mutex, method);
        if (!registry.isOwner(mutex)) return undefined;
        return original.apply(instance, args);
      },
    );
    Reflect.defineMetadata(LEADER_ONLY, [...mutexes, mutex], wrapped);
    return descriptor;
  };
}
