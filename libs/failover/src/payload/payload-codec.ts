import { Injectable } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { MalformedPayloadError, PayloadClassNotAllowedError } from '../errors';
import { FailoverTypeRegistry } from './failover-type.registry';
import { Class, PayloadType, builtinPayloadClass, payloadTypeName } from './payload-type';

const DATE_TAG = '$date';

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

  encode(value: unknown, type?: PayloadType): EncodedPayload {
    return {
      payload: JSON.stringify(value, replacer),
      payloadClass: type ? payloadTypeName(type) : builtinPayloadClass(value),
    };
  }

  decode<T>(failover: string, payload: string, payloadClass: string, type?: PayloadType): T {
    if (!this.registry.isAllowed(payloadClass)) throw new PayloadClassNotAllowedError(failover, payloadClass);
    let plain: unknown;
    try {
      // The reviver visits every key: only pay for it when a Date was written.
      plain = payload.includes(`"${DATE_TAG}"`) ? JSON.parse(payload, reviver) : JSON.parse(payload);
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
