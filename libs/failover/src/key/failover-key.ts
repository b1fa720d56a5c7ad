import { createHash } from 'node:crypto';
import { stringify as formatUuid } from 'uuid';

/**
 * Layers 2 and 3 of a failover key: `effectiveName + ':' + rawKey`, hashed to a UUID v3 with
 * no namespace, byte-identical to Java's `UUID.nameUUIDFromBytes` (the `uuid` package always
 * prepends a namespace, so the MD5 is taken here and the result formatted by `uuid`).
 */
export function failoverKey(effectiveName: string, rawKey: string): string {
  const bytes = createHash('md5').update(`${effectiveName}:${rawKey}`, 'utf8').digest();
  bytes[6] = (bytes[6] & 0x0f) | 0x30; // version 3
  bytes[8] = (bytes[8] & 0x3f) | 0x80; // IETF variant
  return formatUuid(bytes);
}
