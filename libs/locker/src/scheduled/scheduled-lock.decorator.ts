import { Inject } from '@nestjs/common';
import { wrapMethod } from '@holdfast/core/kit';
import { ScheduledLockConfigurationError } from '../errors';
import { SCHEDULED_LOCK_EXECUTOR_PROPERTY, SCHEDULED_LOCK_METADATA } from '../locker.constants';
import { ScheduledLockExecutor } from './scheduled-lock.executor';
import { scheduledLockMetadata, type ScheduledLockOptions } from './scheduled-lock.options';

/**
 * Runs a `@Cron` / `@Interval` / `@Timeout` method on at most one instance per tick, as ShedLock
 * does for Spring: each run first takes the lock row `name` in HOLDFAST_LOCK until (database
 * clock) now + lockAtMostFor; an instance that finds it taken skips the tick. When the job ends,
 * the lock is kept until lockAtLeastFor after the start, then freed. A runner that dies keeps it
 * until lockAtMostFor has passed, never longer.
 *
 * Unlike `@LeaderOnly` (simba), there is no leader: whichever instance gets the tick first runs
 * it, and nothing runs between ticks. The method is wrapped at decoration time (so metadata set
 * by @Cron stays on it, in either decorator order); a skipped tick returns undefined.
 */
export function ScheduledLock(options: ScheduledLockOptions): MethodDecorator {
  return (target, propertyKey, descriptor: PropertyDescriptor) => {
    const where = `${target.constructor.name}.${String(propertyKey)}`;
    const meta = scheduledLockMetadata(options, where);
    if (typeof descriptor.value !== 'function') {
      throw new ScheduledLockConfigurationError(`@ScheduledLock() on ${where}: not a method`);
    }
    Inject(ScheduledLockExecutor)(target, SCHEDULED_LOCK_EXECUTOR_PROPERTY);
    const wrapped = wrapMethod<Record<symbol, ScheduledLockExecutor | undefined>>(
      descriptor,
      (instance, original, args) => {
        const executor = instance?.[SCHEDULED_LOCK_EXECUTOR_PROPERTY];
        if (!executor) {
          return Promise.reject(
            new ScheduledLockConfigurationError(
              `${where} is decorated with @ScheduledLock('${meta.name}') but its instance was not created by ` +
                `Nest with ScheduledLockModule imported (was it created with 'new'?).`,
            ),
          );
        }
        return executor.run(meta, instance, original, args);
      },
    );
    Reflect.defineMetadata(SCHEDULED_LOCK_METADATA, meta, wrapped);
    return descriptor;
  };
}
