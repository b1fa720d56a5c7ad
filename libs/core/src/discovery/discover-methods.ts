import type { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import { NonStaticHandlerError } from '../errors/holdfast.error';

/** A method that carries a decorator's metadata, found by {@link discoverMethods}. */
export interface DiscoveredMethod<T> {
  /** What the decorator stored under the key on the method. */
  readonly metadata: T;
  readonly methodName: string;
  /** `ClassName.methodName`, for logs and error messages. */
  readonly declaredOn: string;
  /** The prototype the method was found on. */
  readonly prototype: object;
  /** The provider or controller that holds it. */
  readonly wrapper: InstanceWrapper;
}

/** A decorated method on a singleton instance, found by {@link discoverHandlers}. */
export interface DiscoveredHandler<T> extends DiscoveredMethod<T> {
  /** The one instance the handler is called on. */
  readonly instance: Record<string, unknown>;
  /** The method as it was at discovery. */
  readonly method: (...args: unknown[]) => unknown;
}

interface Candidate {
  readonly wrapper: InstanceWrapper;
  readonly prototype: object;
  readonly instance: Record<string, unknown> | undefined;
}

/**
 * The one walk of every explorer: providers, then controllers, in Nest's discovery order; a
 * wrapper without an object instance or class prototype (a `useValue: null`, a factory that
 * returned a primitive) has nothing to find and is left out.
 */
function candidates(discovery: DiscoveryService): Candidate[] {
  const found: Candidate[] = [];
  for (const wrapper of [...discovery.getProviders(), ...discovery.getControllers()]) {
    const raw: unknown = wrapper.instance;
    const instance = raw !== null && typeof raw === 'object' ? (raw as Record<string, unknown>) : undefined;
    const prototype: unknown = instance
      ? Object.getPrototypeOf(instance)
      : (wrapper.metatype as { prototype?: unknown } | null | undefined)?.prototype;
    if (prototype === null || typeof prototype !== 'object') continue;
    found.push({ wrapper, prototype, instance });
  }
  return found;
}

function methodsWith<T>(
  scanner: MetadataScanner,
  candidate: Candidate,
  key: string | symbol,
): Array<DiscoveredMethod<T> & { method: (...args: unknown[]) => unknown }> {
  const proto = candidate.prototype as Record<string, unknown>;
  const className = (proto.constructor as { name?: string } | undefined)?.name || 'provider';
  const found: Array<DiscoveredMethod<T> & { method: (...args: unknown[]) => unknown }> = [];
  for (const methodName of scanner.getAllMethodNames(proto)) {
    const method = proto[methodName];
    if (typeof method !== 'function') continue;
    const metadata = Reflect.getMetadata(key, method) as T | undefined;
    if (metadata === undefined) continue;
    found.push({
      metadata,
      methodName,
      declaredOn: `${className}.${methodName}`,
      prototype: candidate.prototype,
      wrapper: candidate.wrapper,
      method: method as (...args: unknown[]) => unknown,
    });
  }
  return found;
}

/**
 * Every method whose metadata under `key` is set, on the classes of all providers and
 * controllers of any scope, each class once. For decorators that act on the class itself (they
 * wrap the method when it is declared) and only need their metadata collected.
 */
export function discoverMethods<T>(
  discovery: DiscoveryService,
  scanner: MetadataScanner,
  key: string | symbol,
): Array<DiscoveredMethod<T>> {
  const seen = new Set<object>();
  const found: Array<DiscoveredMethod<T>> = [];
  for (const candidate of candidates(discovery)) {
    if (seen.has(candidate.prototype)) continue;
    seen.add(candidate.prototype);
    for (const { method: _method, ...discovered } of methodsWith<T>(scanner, candidate, key)) {
      found.push(discovered);
    }
  }
  return found;
}

/**
 * Every method whose metadata under `key` is set, with the singleton instance to call it on,
 * each instance once (an alias provider does not add it twice). A decorated method on a provider
 * that is not a singleton is refused with {@link NonStaticHandlerError} naming `decorator`.
 */
export function discoverHandlers<T>(
  discovery: DiscoveryService,
  scanner: MetadataScanner,
  key: string | symbol,
  decorator: string,
): Array<DiscoveredHandler<T>> {
  const seen = new Set<object>();
  const found: Array<DiscoveredHandler<T>> = [];
  for (const candidate of candidates(discovery)) {
    const methods = methodsWith<T>(scanner, candidate, key);
    if (!methods.length) continue;
    if (!candidate.wrapper.isDependencyTreeStatic()) {
      throw new NonStaticHandlerError(decorator, methods[0].declaredOn);
    }
    const { instance } = candidate;
    if (!instance || seen.has(instance)) continue;
    seen.add(instance);
    for (const method of methods) found.push({ ...method, instance });
  }
  return found;
}

/** A provider or controller whose class carries a class decorator's metadata, found by {@link discoverInstances}. */
export interface DiscoveredInstance<T> {
  readonly metadata: T;
  /** The class name, for logs and error messages. */
  readonly declaredOn: string;
  /** The one singleton instance. */
  readonly instance: Record<string, unknown>;
  readonly wrapper: InstanceWrapper;
}

/**
 * Every singleton provider or controller whose class has metadata under `key` (a class
 * decorator), by the same walk as the handler decorators, each instance once. A marked class that
 * is not a singleton is refused with {@link NonStaticHandlerError} naming `decorator`.
 */
export function discoverInstances<T>(
  discovery: DiscoveryService,
  key: string | symbol,
  decorator: string,
): Array<DiscoveredInstance<T>> {
  const seen = new Set<object>();
  const found: Array<DiscoveredInstance<T>> = [];
  for (const candidate of candidates(discovery)) {
    const type = (candidate.prototype as { constructor?: unknown }).constructor;
    if (typeof type !== 'function') continue;
    const metadata = Reflect.getMetadata(key, type) as T | undefined;
    if (metadata === undefined) continue;
    const declaredOn = (type as { name?: string }).name || 'provider';
    if (!candidate.wrapper.isDependencyTreeStatic()) throw new NonStaticHandlerError(decorator, declaredOn);
    const { instance } = candidate;
    if (!instance || seen.has(instance)) continue;
    seen.add(instance);
    found.push({ metadata, declaredOn, instance, wrapper: candidate.wrapper });
  }
  return found;
}
