/** A method as it sits on a prototype: called with its instance as `this`. */
export type MethodBody = (this: unknown, ...args: unknown[]) => unknown;

/**
 * What runs instead of the method: it gets the instance the call was made on (`this` of the
 * call, as the caller passed it), the original method and the call's arguments, and decides
 * whether and how to call `original.apply(instance, args)`. Its return value is the call's.
 */
export type AroundMethod<T = unknown> = (instance: T, original: MethodBody, args: unknown[]) => unknown;

/**
 * The method wrapping of Holdfast's method decorators (`@Failover`, `@ScheduledLock`,
 * `@LeaderOnly`), written once. Replaces `descriptor.value` with a function that calls
 * `around(this, original, args)`, so calls from other providers and the class's own `this.`
 * calls both go through it. The wrapper keeps the original's `name` and carries every metadata
 * entry already set on the original (e.g. by @nestjs/schedule's `@Cron`), so the decorators
 * work in either order. Returns the wrapper, on which the caller sets its own metadata.
 *
 * Throws a TypeError when the descriptor holds no function (a decorator that wants its own
 * error checks `descriptor.value` first).
 *
 * @example
 * return (target, key, descriptor) => {
 *   const wrapped = wrapMethod<Job>(descriptor, (job, run, args) => (job.enabled ? run.apply(job, args) : undefined));
 *   Reflect.defineMetadata(MY_METADATA, options, wrapped);
 * };
 */
export function wrapMethod<T = unknown>(descriptor: PropertyDescriptor, around: AroundMethod<T>): MethodBody {
  const original: unknown = descriptor.value;
  if (typeof original !== 'function') throw new TypeError('wrapMethod: the descriptor holds no method');
  const method = original as MethodBody;
  const wrapped = function (this: unknown, ...args: unknown[]): unknown {
    return around(this as T, method, args);
  };
  Object.defineProperty(wrapped, 'name', { value: method.name });
  for (const key of Reflect.getMetadataKeys(method)) {
    Reflect.defineMetadata(key, Reflect.getMetadata(key, method), wrapped);
  }
  descriptor.value = wrapped;
  return wrapped;
}
