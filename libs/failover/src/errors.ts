import { HoldfastError } from '@holdfast/core/kit';

/** Base of the failover module's errors. */
export class FailoverError extends HoldfastError {}

/** A @Failover declaration or the module wiring is wrong (found at bootstrap). */
export class FailoverConfigurationError extends FailoverError {
  constructor(message: string) {
    super(message, 'HOLDFAST_FAILOVER_CONFIGURATION');
  }
}

/**
 * A stored entry could not be turned back into a value: its payload class is not allowed, or
 * its payload is malformed. The recovery fails for that call (the caller gets the exception
 * policy's result); the row itself is left untouched.
 */
export class FailoverStoreException extends FailoverError {
  constructor(message: string, code = 'HOLDFAST_FAILOVER_STORE', options?: { cause?: unknown }) {
    super(message, code, options);
  }
}

export class PayloadClassNotAllowedError extends FailoverStoreException {
  constructor(
    readonly failover: string,
    readonly payloadClass: string,
  ) {
    super(
      `Failover '${failover}': stored payload class ${JSON.stringify(payloadClass)} is not allowed. ` +
        `Declare it as the 'type' of a @Failover() or list it in store.allowedPayloadClasses.`,
      'HOLDFAST_FAILOVER_PAYLOAD_CLASS_NOT_ALLOWED',
    );
  }
}

export class MalformedPayloadError extends FailoverStoreException {
  constructor(
    readonly failover: string,
    readonly payloadClass: string,
    cause: unknown,
  ) {
    super(
      `Failover '${failover}': the stored payload (class ${JSON.stringify(payloadClass)}) is not valid JSON ` +
        `and cannot be recovered: ${(cause as Error)?.message ?? cause}`,
      'HOLDFAST_FAILOVER_PAYLOAD_MALFORMED',
      { cause },
    );
  }
}

/** The caller's tenant could not be resolved, or is not allowed (multiTenant.strict). */
export class FailoverTenantError extends FailoverError {
  constructor(message: string) {
    super(message, 'HOLDFAST_FAILOVER_TENANT');
  }
}

/** A PayloadSplitter threw: names the splitter, the operation and the failover. */
export class PayloadSplitterError extends FailoverError {
  constructor(
    readonly splitter: string,
    readonly operation: 'splitOnStore' | 'splitOnRecover' | 'merge',
    readonly failover: string,
    cause: unknown,
  ) {
    super(
      `Payload splitter ${splitter}.${operation} failed for failover '${failover}': ${(cause as Error)?.message ?? cause}`,
      'HOLDFAST_FAILOVER_SPLITTER',
      { cause },
    );
  }
}

/**
 * An argument of a @Failover call cannot be turned into a key without risking that distinct
 * values share one (a function, a symbol, a cycle, an instance with no observable state).
 * Thrown by the key generators; a @Failover call never sees it: the upstream answers that call
 * alone (nothing stored, nothing recovered), with one warning per failover and reason and
 * `holdfast.failover.bypassed{cause: 'key'}` counted.
 */
export class FailoverKeyError extends FailoverError {
  constructor(
    readonly failover: string | undefined,
    readonly position: number,
    readonly path: string,
    readonly reason: string,
  ) {
    super(
      `${failover === undefined ? 'Failover' : `Failover '${failover}'`}: argument ${position}${path ? ` (at ${path})` : ''} cannot be keyed: ${reason}. ` +
        `Pass a value with observable state, or give the failover a keyGenerator.`,
      'HOLDFAST_FAILOVER_KEY',
    );
  }
}

/**
 * A value is an instance of a class the failover cannot rebuild on recovery: it is refused
 * before it is stored (logged once as an error, counted), and the call still returns it.
 */
export class UnknownPayloadClassError extends FailoverStoreException {
  constructor(
    readonly failover: string,
    readonly payloadClass: string,
  ) {
    super(
      `Failover '${failover}': the value is an instance of class ${payloadClass}, which is not a known payload ` +
        `class, so it could never be rebuilt on recovery: it was not stored. Declare it as the failover's ` +
        `'type', list it in FailoverModule.forRoot({ types: [${payloadClass}] }), or decorate it with ` +
        `@FailoverPayload() (with a qualified name if another payload class has the same name).`,
      'HOLDFAST_FAILOVER_PAYLOAD_CLASS_UNKNOWN',
    );
  }
}

/**
 * A `@Failover({ store })` names a store no `FailoverModule.forRoot({ name })` of the application
 * registers (or one its provider cannot see: a module with `isGlobal: false` it does not import).
 * Thrown at bootstrap.
 */
export class UnknownFailoverStoreError extends FailoverError {
  constructor(
    readonly failover: string,
    readonly store: string,
    readonly declaredOn: string,
    readonly known: readonly string[],
    reason = 'no FailoverModule is registered under that name',
  ) {
    super(
      `Failover '${failover}' on ${declaredOn} uses store '${store}': ${reason} ` +
        `(registered: ${known.length ? known.map((name) => `'${name}'`).join(', ') : 'none'}). ` +
        `Import FailoverModule.forRoot({ name: '${store}', … }), or fix the failover's 'store'.`,
      'HOLDFAST_FAILOVER_UNKNOWN_STORE',
    );
  }
}

/** Two `FailoverModule.forRoot()` of one application register the same `name` (or both none). */
export class DuplicateFailoverStoreError extends FailoverError {
  constructor(readonly store: string) {
    super(
      `Two FailoverModules are registered as store '${store}': give each its own 'name' ` +
        `(FailoverModule.forRoot({ name: 'reports', … })); the one without a name is 'default'.`,
      'HOLDFAST_FAILOVER_DUPLICATE_STORE',
    );
  }
}

/** A store wait that passed `storeTimeout`. */
export class StoreTimeoutError extends FailoverError {
  constructor(
    readonly operation: string,
    readonly timeoutMs: number,
  ) {
    super(
      `Failover store ${operation} took longer than storeTimeout (${timeoutMs} ms): the call went on without the store`,
      'HOLDFAST_FAILOVER_STORE_TIMEOUT',
    );
  }
}

/** The store is being skipped (the breaker is open). */
export class StoreSkippedError extends FailoverError {
  constructor() {
    super('Failover store skipped: it was unreachable moments ago', 'HOLDFAST_FAILOVER_STORE_SKIPPED');
  }
}

/** A stored value that cannot be decrypted: wrong key, other cipher, or tampered row. */
export class PayloadDecryptionError extends FailoverStoreException {
  constructor(
    readonly failover: string,
    reason: string,
  ) {
    super(
      `Failover '${failover}': the stored payload cannot be decrypted (${reason}). ` +
        `Check the encryption key; the row was left as it is.`,
      'HOLDFAST_FAILOVER_PAYLOAD_DECRYPTION',
    );
  }
}

/**
 * A write the writer already reported (logged and counted): a failure for the store breaker,
 * never seen by a caller.
 */
export class StoreWriteFailed extends FailoverError {
  constructor() {
    super('Failover store write failed (already reported)', 'HOLDFAST_FAILOVER_STORE_WRITE_FAILED');
  }
}

/**
 * An argument the key generator cannot encode (a function, a symbol, a cycle): caught inside the
 * generator and reported as FailoverKeyError with the argument's position.
 */
export class KeyEncodingError extends FailoverError {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(reason, 'HOLDFAST_FAILOVER_KEY_ENCODING');
  }
}

/**
 * An `encryption` option the cipher cannot work with (no key, a key of the wrong length, a custom
 * cipher without an id or methods), or data too short to be its output: startup reports it as
 * InvalidOptionsError, a read as PayloadDecryptionError.
 */
export class PayloadCipherError extends FailoverError {
  constructor(message: string) {
    super(message, 'HOLDFAST_FAILOVER_CIPHER');
  }
}

/** Why FailoverHealthIndicator reports the store down (its message becomes the result's `message`). */
export class FailoverUnhealthyError extends FailoverError {
  constructor(message: string) {
    super(message, 'HOLDFAST_FAILOVER_UNHEALTHY');
  }
}
