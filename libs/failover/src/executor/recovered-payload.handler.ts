/** What a RecoveredPayloadHandler knows about the failed call. */
export interface RecoveryContext {
  /** The failover's name and the name entries are stored under (domain or name). */
  name: string;
  effectiveName: string;
  rawKey: string;
  key: string;
  args: readonly unknown[];
  /** The upstream's error. */
  error: unknown;
}

/**
 * Supplies a value when the upstream failed and nothing (unexpired) is stored. Return
 * `undefined` to let the exception policy decide.
 */
export abstract class RecoveredPayloadHandler {
  abstract recover(context: RecoveryContext): unknown | Promise<unknown>;
}
