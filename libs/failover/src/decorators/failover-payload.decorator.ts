import type { Class } from '../payload/payload-type';

const NAME = Symbol('holdfast:failover-payload-name');

/** Every class decorated with @FailoverPayload(), in decoration order (read at bootstrap). */
const decorated: Class[] = [];

/**
 * Declares a class as a failover payload: its instances may be stored by any failover and are
 * rebuilt as instances on recovery. `name` (default: the class name) is what PAYLOAD_CLASS
 * holds; give a qualified one (`'billing.Country'`) when two payload classes share a name.
 */
export function FailoverPayload(name?: string): ClassDecorator {
  return (target) => {
    if (name !== undefined) Reflect.defineMetadata(NAME, name, target);
    decorated.push(target as unknown as Class);
  };
}

/** The name given with @FailoverPayload(name), if any (own, not inherited). */
export function failoverPayloadName(cls: Class): string | undefined {
  return Reflect.getOwnMetadata(NAME, cls) as string | undefined;
}

export function decoratedPayloadClasses(): readonly Class[] {
  return decorated;
}
