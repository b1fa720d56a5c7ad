import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { PayloadCipherError } from '../errors';

/** Encrypts PAYLOAD at rest. `id` is written into every value: `ENC(<id>:<base64>)`. */
export interface PayloadCipher {
  readonly id: string;
  encrypt(plain: Buffer): Buffer;
  /** Throws when the data was tampered with or the key is wrong. */
  decrypt(data: Buffer): Buffer;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** AES-256-GCM (Node's crypto): a random 96-bit IV per value, authenticated with a 128-bit tag. */
export class Aes256GcmCipher implements PayloadCipher {
  readonly id = 'aes-256-gcm';

  constructor(private readonly key: Buffer) {
    if (key.length !== 32)
      throw new PayloadCipherError(`aes-256-gcm needs a 32-byte key, got ${key.length} bytes`);
  }

  encrypt(plain: Buffer): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]);
  }

  decrypt(data: Buffer): Buffer {
    if (data.length < IV_BYTES + TAG_BYTES) throw new PayloadCipherError('ciphertext too short');
    const decipher = createDecipheriv('aes-256-gcm', this.key, data.subarray(0, IV_BYTES));
    decipher.setAuthTag(data.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(data.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
  }
}

/** A key as given in options: a Buffer, 64 hex characters, or base64 of 32 bytes. */
function keyBytes(key: string | Buffer | undefined): Buffer {
  if (Buffer.isBuffer(key)) return key;
  if (typeof key !== 'string' || key === '')
    throw new PayloadCipherError(
      "'key' is required for aes-256-gcm (32 bytes: a Buffer, 64 hex characters or base64)",
    );
  if (/^[0-9a-fA-F]{64}$/.test(key)) return Buffer.from(key, 'hex');
  const decoded = Buffer.from(key, 'base64');
  if (decoded.length !== 32)
    throw new PayloadCipherError(
      `'key' must be 32 bytes (a Buffer, 64 hex characters or base64); the given string decodes to ${decoded.length} bytes`,
    );
  return decoded;
}

/** The cipher for `encryption` options; errors never quote the key. */
export function resolveCipher(options: {
  cipher?: 'aes-256-gcm' | PayloadCipher;
  key?: string | Buffer;
}): PayloadCipher {
  const cipher = options.cipher ?? 'aes-256-gcm';
  if (typeof cipher === 'object') {
    if (typeof cipher.id !== 'string' || !/^[A-Za-z0-9._-]+$/.test(cipher.id))
      throw new PayloadCipherError("a custom cipher needs an 'id' of letters, digits, '.', '_' or '-'");
    if (typeof cipher.encrypt !== 'function' || typeof cipher.decrypt !== 'function')
      throw new PayloadCipherError('a custom cipher needs encrypt() and decrypt()');
    return cipher;
  }
  if (cipher !== 'aes-256-gcm') throw new PayloadCipherError(`unknown cipher ${JSON.stringify(cipher)}`);
  return new Aes256GcmCipher(keyBytes(options.key));
}
