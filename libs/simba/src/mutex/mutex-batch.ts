import type { MutexOwner } from './mutex-owner';

export interface AcquireResult {
  /** The conditional UPDATE matched: the caller owns the mutex until `owner.transitionAt`. */
  acquired: boolean;
  owner: MutexOwner;
}

/** One contend service's attempt in a batch (see MutexContendLoop). */
export interface BatchRequest {
  mutex: string;
  contenderId: string;
  attempt: 'acquire' | 'peek';
  /** The service believes it owns, or the row says so: renew rather than take. */
  renew: boolean;
  ttl: number;
  transition: number;
}

/** What the contend loop needs of its repository: one batched statement round per tick. */
export interface BatchSource {
  readonly queries: { readonly table: string };
  batch(
    requests: readonly BatchRequest[],
    timeoutMs?: number,
  ): Promise<{ rows: Map<string, MutexOwner>; timing: { connectMs: number; totalMs: number } }>;
}
