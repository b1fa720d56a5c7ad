import type { SqlClient } from '@holdfast/core/kit';
import { CorMessageAccept } from './cor-message.accept';
import { CorMessageTable } from './cor-message.base';
import { CorMessageClaim } from './cor-message.claim';
import { CorMessageCleanup } from './cor-message.cleanup';
import { CorMessageCompletion } from './cor-message.completion';
import { CorMessageGroups } from './cor-message.groups';
import { detectCorMessageLayout } from './cor-message.layout';
import { CorMessageManagement } from './cor-message.management';

export type { Lease, MessageRow, NewMessageRow, Now } from './cor-message.rows';
export type { ClaimLease } from './cor-message.claim';

/**
 * Every statement on `<prefix>COR_MESSAGE`, one entry point for the inbox's services. Each job
 * lives in its own file, built from the shared pieces of cor-message.base.ts and the dialect's;
 * the methods here are theirs (see each one's documentation there).
 */
export class CorMessageQueries {
  private readonly on: CorMessageTable;

  // The methods of each job, bound to it (see each one's documentation there).
  // cor-message.accept.ts
  declare readonly existingIds: CorMessageAccept['existingIds'];
  declare readonly insert: CorMessageAccept['insert'];
  // cor-message.claim.ts
  declare readonly claim: CorMessageClaim['claim'];
  // cor-message.completion.ts
  declare readonly extendLeases: CorMessageCompletion['extendLeases'];
  declare readonly deleteOwned: CorMessageCompletion['deleteOwned'];
  declare readonly deleteDelivered: CorMessageCompletion['deleteDelivered'];
  declare readonly recordFailure: CorMessageCompletion['recordFailure'];
  declare readonly release: CorMessageCompletion['release'];
  // cor-message.cleanup.ts
  declare readonly expiredIds: CorMessageCleanup['expiredIds'];
  declare readonly deleteExpired: CorMessageCleanup['deleteExpired'];
  declare readonly deleteOrphanGroups: CorMessageCleanup['deleteOrphanGroups'];
  // cor-message.management.ts
  declare readonly list: CorMessageManagement['list'];
  declare readonly find: CorMessageManagement['find'];
  declare readonly counts: CorMessageManagement['counts'];
  declare readonly countByType: CorMessageManagement['countByType'];
  declare readonly countByRetries: CorMessageManagement['countByRetries'];
  declare readonly pause: CorMessageManagement['pause'];
  declare readonly resume: CorMessageManagement['resume'];
  declare readonly retryNow: CorMessageManagement['retryNow'];
  declare readonly setRetries: CorMessageManagement['setRetries'];
  declare readonly delete: CorMessageManagement['delete'];

  constructor(
    readonly sql: SqlClient,
    prefix: string,
    maxRetries = 5,
  ) {
    this.on = new CorMessageTable(sql, prefix, maxRetries);
    const groups = new CorMessageGroups(this.on);
    Object.assign(
      this,
      methodsOf(new CorMessageAccept(this.on), ['existingIds', 'insert']),
      methodsOf(new CorMessageClaim(this.on, groups), ['claim']),
      methodsOf(new CorMessageCompletion(this.on, groups), [
        'extendLeases',
        'deleteOwned',
        'deleteDelivered',
        'recordFailure',
        'release',
      ]),
      methodsOf(new CorMessageCleanup(this.on, groups), [
        'expiredIds',
        'deleteExpired',
        'deleteOrphanGroups',
      ]),
      methodsOf(new CorMessageManagement(this.on, groups), [
        'list',
        'find',
        'counts',
        'countByType',
        'countByRetries',
        'pause',
        'resume',
        'retryNow',
        'setRetries',
        'delete',
      ]),
    );
  }

  get table(): string {
    return this.on.table;
  }

  /** See CorMessageTable.notifyChannel. */
  get notifyChannel(): string | undefined {
    return this.on.notifyChannel;
  }

  set notifyChannel(channel: string | undefined) {
    this.on.notifyChannel = channel;
  }

  /** See CorMessageTable.groupTable. */
  get groupTable(): string | undefined {
    return this.on.groupTable;
  }

  set groupTable(table: string | undefined) {
    this.on.groupTable = table;
  }

  /** False where NEXT_RETRY cannot hold FAR_FUTURE, so messages cannot be paused. */
  get canPause(): boolean {
    return this.on.canPause;
  }

  /** See detectCorMessageLayout. Call once the table exists. */
  detectLayout(): Promise<void> {
    return detectCorMessageLayout(this.on);
  }
}

/** The methods `names` of `job`, bound to it. */
function methodsOf<T extends object, K extends keyof T>(job: T, names: readonly K[]): Pick<T, K> {
  const picked = {} as Pick<T, K>;
  for (const name of names) picked[name] = (job[name] as (...args: unknown[]) => unknown).bind(job) as T[K];
  return picked;
}
