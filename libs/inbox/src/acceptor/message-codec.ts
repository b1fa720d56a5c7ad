import { PayloadDecodingError, PayloadEncodingError } from '../errors';
import type { PayloadEncoding } from '../inbox-message';

export const PAYLOAD_ENCODINGS: readonly PayloadEncoding[] = ['json', 'binary'];

/**
 * camunda-bpm-correlate's name for JSON payloads (its JacksonJsonDecoder): what PAYLOAD_ENCODING
 * holds for `encoding: 'json'`, so its reader decodes what Holdfast writes.
 */
export const JACKSON_ENCODING = 'jackson';

/** The PAYLOAD_ENCODING value stored for an encoding of the public API. */
export function storedEncoding(encoding: PayloadEncoding): string {
  return encoding === 'json' ? JACKSON_ENCODING : encoding;
}

/**
 * The public encoding of a stored PAYLOAD_ENCODING, case-insensitively ('jackson', 'JACKSON' as in
 * the seed's fixture, and Holdfast's earlier 'json' are JSON); undefined when unknown.
 */
export function apiEncoding(stored: string): PayloadEncoding | undefined {
  // What Holdfast writes, without lowering the case of every delivered message's encoding.
  if (stored === JACKSON_ENCODING) return 'json';
  const lower = String(stored).toLowerCase();
  if (lower === JACKSON_ENCODING || lower === 'json') return 'json';
  if (lower === 'binary') return 'binary';
  return undefined;
}

/** Payload → the bytes stored in PAYLOAD. */
export function encodePayload(payload: unknown, encoding: PayloadEncoding, index?: number): Buffer {
  if (encoding === 'binary') {
    if (Buffer.isBuffer(payload)) return payload;
    if (payload instanceof Uint8Array)
      return Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
    throw new PayloadEncodingError(
      'binary',
      `expected a Buffer or Uint8Array, got ${describe(payload)}`,
      index,
    );
  }
  let text: string | undefined;
  try {
    text = JSON.stringify(payload);
  } catch (cause) {
    throw new PayloadEncodingError('json', (cause as Error).message, index, { cause });
  }
  if (text === undefined) {
    throw new PayloadEncodingError('json', `${describe(payload)} has no JSON representation`, index);
  }
  return Buffer.from(text, 'utf8');
}

/** PAYLOAD bytes → the value a handler receives. */
export function decodePayload(id: string, encoding: string, bytes: unknown): unknown {
  const buffer = toBuffer(bytes);
  const known = apiEncoding(encoding);
  if (known === 'binary') return buffer;
  if (known === 'json') {
    try {
      return JSON.parse(buffer.toString('utf8'));
    } catch (cause) {
      throw new PayloadDecodingError(id, encoding, { cause });
    }
  }
  throw new PayloadDecodingError(id, encoding);
}

function toBuffer(bytes: unknown): Buffer {
  if (Buffer.isBuffer(bytes)) return bytes;
  if (bytes instanceof Uint8Array) return Buffer.from(bytes);
  if (typeof bytes === 'string') return Buffer.from(bytes, 'utf8');
  if (bytes === null || bytes === undefined) return Buffer.alloc(0);
  return Buffer.from(String(bytes), 'utf8');
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'function') return `a function (${value.name || 'anonymous'})`;
  if (typeof value === 'object') return `an object of type ${value.constructor?.name ?? 'Object'}`;
  return `a ${typeof value}`;
}
