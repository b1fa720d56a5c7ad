import { Injectable } from '@nestjs/common';
import type { SqlDialect } from '@holdfast/core/kit';
import { MalformedPayloadError } from '../errors';

/**
 * How the PAYLOAD column is bound and read. The default binds the JSON text as-is and reads
 * text, or UTF-8 bytes from drivers that return a Buffer. Replace it to compress or to bind a
 * driver-specific type.
 */
@Injectable()
export class PayloadColumnResolver {
  bind(json: string, _dialect: SqlDialect): unknown {
    return json;
  }

  read(value: unknown, failover: string, payloadClass: string): string {
    if (typeof value === 'string') return value;
    if (Buffer.isBuffer(value)) return value.toString('utf8');
    throw new MalformedPayloadError(
      failover,
      payloadClass,
      new TypeError(`PAYLOAD is ${value === null ? 'NULL' : typeof value}`),
    );
  }
}
