import type { SqlDialect } from '@holdfast/core/kit';
import { PayloadDecryptionError } from '../errors';
import type { PayloadCipher } from '../payload/payload-cipher';
import { PayloadColumnResolver } from './payload-column.resolver';

const ENCRYPTED = /^ENC\(([A-Za-z0-9._-]+):([A-Za-z0-9+/=]*)\)$/;

/**
 * Writes PAYLOAD as `ENC(<cipherId>:<base64>)`. Reads both forms, so rows written before
 * encryption was switched on stay readable.
 */
export class EncryptingPayloadColumnResolver extends PayloadColumnResolver {
  constructor(
    private readonly cipher: PayloadCipher,
    private readonly inner: PayloadColumnResolver = new PayloadColumnResolver(),
  ) {
    super();
  }

  override bind(json: string, dialect: SqlDialect): unknown {
    const sealed = this.cipher.encrypt(Buffer.from(json, 'utf8')).toString('base64');
    return this.inner.bind(`ENC(${this.cipher.id}:${sealed})`, dialect);
  }

  override read(value: unknown, failover: string, payloadClass: string): string {
    const text = this.inner.read(value, failover, payloadClass);
    if (!text.startsWith('ENC(')) return text;
    const match = ENCRYPTED.exec(text);
    if (!match) throw new PayloadDecryptionError(failover, 'malformed ENC(...) value');
    if (match[1] !== this.cipher.id)
      throw new PayloadDecryptionError(
        failover,
        `written with cipher '${match[1]}', configured '${this.cipher.id}'`,
      );
    try {
      return this.cipher.decrypt(Buffer.from(match[2], 'base64')).toString('utf8');
    } catch {
      throw new PayloadDecryptionError(failover, 'authentication failed: wrong key or tampered data');
    }
  }
}
