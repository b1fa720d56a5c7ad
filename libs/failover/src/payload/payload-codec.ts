import { Injectable } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { MalformedPayloadError, PayloadClassNotAllowedError, UnknownPayloadClassError } from '../errors';
import { FailoverTypeRegistry } from './failover-type.registry';
import { Class, PayloadType, builtinPayloadClass, declaredType, isJavaNamed } from './payload-type';

const DATE_TAG = '$date';
/** How a tagged Date shows in stored JSON text. */
const DATE_MARK = `"${DATE_TAG}"`;

/** JSON with Dates kept as `{ "$date": ISO }` so they come back as Dates anywhere in the tree. */
function replacer(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const raw = this[key];
  return raw instanceof Date ? { [DATE_TAG]: raw.toISOString() } : value;
}

function reviver(_key: string, value: unknown): unknown {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === DATE_TAG)
      return new Date((value as Record<string, string>)[DATE_TAG]);
  }
  return value;
}

/** Whether a Date sits anywhere in the value (as JSON.stringify would reach it). */
function hasDate(value: unknown, depth: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (value instanceof Date) return true;
  if (depth > 64) return true; // deep trees: let the replacer decide
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (hasDate(value[i], depth + 1)) return true;
    return false;
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return true;
  for (const key in value) {
    if (
      Object.prototype.hasOwnProperty.call(value, key) &&
      hasDate((value as Record<string, unknown>)[key], depth + 1)
    )
      return true;
  }
  return false;
}

/** The class of a value that is an instance of one (not a plain object, array or Date). */
function instanceClass(value: unknown): Class | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof Date)
    return undefined;
  const proto = Object.getPrototypeOf(value);
  if (proto === Object.prototype || proto === null) return undefined;
  return proto.constructor as Class;
}

export interface EncodedPayload {
  payload: string;
  payloadClass: string;
}

/**
 * Turns payloads into PAYLOAD/PAYLOAD_CLASS and back. A payload is rebuilt as an instance of
 * the declared type (class-transformer; nested classes through `@Type()`, Dates automatically),
 * and only when its PAYLOAD_CLASS is on the allowlist.
 */
@Injectable()
export class PayloadCodec {
  constructor(private readonly registry: FailoverTypeRegistry) {}

  encode(value: unknown, type?: PayloadType, failover = '?'): EncodedPayload {
    return {
      // A replacer costs a call per key: only pay for it when there is a Date to tag.
      payload: hasDate(value, 0) ? JSON.stringify(value, replacer) : JSON.stringify(value),
      payloadClass: this.payloadClass(value, type, failover),
    };
  }

  /**
   * PAYLOAD_CLASS for a value: the declared type's registered name; else a plain JSON shape's
   * builtin name; else the registered name of the value's class (`Name[]` for an array of
   * instances). A class instance whose class is not registered throws UnknownPayloadClassError:
   * it could be stored but never rebuilt.
   */
  payloadClass(value: unknown, type: PayloadType | undefined, failover: string): string {
    if (isJavaNamed(type)) {
      // The value must still be one Holdfast can rebuild on recovery: checked as without a name.
      this.payloadClass(value, type.type, failover);
      return type.javaClass;
    }
    if (type) return this.registry.typeName(type);
    if (value === null || typeof value !== 'object') return builtinPayloadClass(value);
    if (Array.isArray(value)) {
      const instance = value.find((v) => instanceClass(v) !== undefined) as object | undefined;
      if (!instance) return 'Array';
      const cls = instanceClass(instance)!;
      const name = this.registry.nameOf(cls);
      if (name === undefined) throw new UnknownPayloadClassError(failover, cls.name || 'anonymous class');
      return `${name}[]`;
    }
    const cls = instanceClass(value);
    if (!cls) return value instanceof Date ? 'Date' : 'Object';
    const name = this.registry.nameOf(cls);
    if (name === undefined) throw new UnknownPayloadClassError(failover, cls.name || 'anonymous class');
    return name;
  }

  decode<T>(failover: string, payload: string, payloadClass: string, stored?: PayloadType): T {
    // The Java name a failover stores under is its own to read back.
    const named = isJavaNamed(stored) && stored.javaClass === payloadClass;
    if (!named && !this.registry.isAllowed(payloadClass))
      throw new PayloadClassNotAllowedError(failover, payloadClass);
    const type = declaredType(stored);
    let plain: unknown;
    try {
      // The reviver visits every key: only pay for it when a Date was written.
      plain = payload.includes(DATE_MARK) ? JSON.parse(payload, reviver) : JSON.parse(payload);
    } catch (cause) {
      throw new MalformedPayloadError(failover, payloadClass, cause);
    }
    const cls: Class | undefined = type
      ? Array.isArray(type)
        ? type[0]
        : type
      : this.registry.classFor(payloadClass);
    if (!cls || plain === null || typeof plain !== 'object') return plain as T;
    if (Array.isArray(plain)) {
      return plain.map((p) => (p && typeof p === 'object' ? plainToInstance(cls, p) : p)) as T;
    }
    return plainToInstance(cls, plain) as T;
  }
}
