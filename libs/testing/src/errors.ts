import { HoldfastError } from '@holdfast/core/kit';

/** `waitUntil` gave up: what was awaited did not happen in time (the message names the last value seen). */
export class WaitTimeoutError extends HoldfastError {
  constructor(message: string) {
    super(message, 'HOLDFAST_TESTING_WAIT_TIMEOUT');
  }
}

/** The kit's own `ts-register.js`, which a forked `.ts` worker preloads, is not where it should be. */
export class TsRegisterMissingError extends HoldfastError {
  constructor(readonly file: string) {
    super(`@holdfast/testing: ${file} is missing`, 'HOLDFAST_TESTING_TS_REGISTER_MISSING');
  }
}
