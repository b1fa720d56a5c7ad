import type { SqlClient } from '@holdfast/core/kit';
import { CorMessageAccept } from './cor-message.accept';
import { CorMessageClaimTerms, type CorMessageClaim } from './cor-message.claim';
import { CorMessageClaimByKeys } from './cor-message.claim-by-keys';
import { CorMessageClaimOneStatement } from './cor-message.claim-one-statement';
import { FairCandidates, FairClaimInOneStatement } from './cor-message.claim-fair';
import { CorMessageCleanup } from './cor-message.cleanup';
import { CorMessageCompletion } from './cor-message.completion';
import { CorMessageGroups } from './cor-message.groups';
import { detectCorMessageLayout } from './cor-message.layout';
import { CorMessageManagement } from './cor-message.management';
import { CorMessageShared, type CorMessageFacts } from './cor-message.shared';
import { locksScannedRows } from './inbox-sql.dialect';

/** The jobs on one CorMessageShared, each built once (see CorMessageStore). */
interface CorMessageJobs {
  readonly on: CorMessageShared;
  readonly accept: CorMessageAccept;
  readonly claims: CorMessageClaim;
  readonly completion: CorMessageCompletion;
  readonly cleanup: CorMessageCleanup;
  readonly management: CorMessageManagement;
}

function jobsOn(on: CorMessageShared): CorMessageJobs {
  const groups = new CorMessageGroups(on);
  const terms = new CorMessageClaimTerms(on);
  return {
    on,
    accept: new CorMessageAccept(on),
    claims: claimsOn(on, groups, terms),
    completion: new CorMessageCompletion(on, groups),
    cleanup: new CorMessageCleanup(on, groups),
    management: new CorMessageManagement(on, groups),
  };
}

/**
 * The way to claim, by what the dialect's locking reads lock (see CorMessageClaim); with fair
 * share on, its fair form (see cor-message.claim-fair.ts).
 */
function claimsOn(
  on: CorMessageShared,
  groups: CorMessageGroups,
  terms: CorMessageClaimTerms,
): CorMessageClaim {
  if (locksScannedRows(on.d))
    return new CorMessageClaimByKeys(
      on,
      groups,
      terms,
      on.fairShare ? new FairCandidates(on, terms) : undefined,
    );
  const plain = new CorMessageClaimOneStatement(on, groups, terms);
  return on.fairShare ? new FairClaimInOneStatement(on, terms, plain) : plain;
}

/**
 * The statements on `<prefix>COR_MESSAGE` through one client, one class per job (each in its own
 * file), and the one place that builds them: callers use the class whose statement they run
 * (`store.claims.claim(…)`). The jobs share one CorMessageShared (the client, the names, the
 * facts learnt of the table); none of them changes after construction. What the inbox learns of
 * the table at startup (`configure`, `detectLayout`) builds the jobs anew on the new facts.
 */
export class CorMessageStore {
  private jobs: CorMessageJobs;

  constructor(sql: SqlClient, prefix: string, maxRetries = 5) {
    this.jobs = jobsOn(new CorMessageShared(sql, prefix, maxRetries));
  }

  /** What every job shares. */
  get on(): CorMessageShared {
    return this.jobs.on;
  }

  /** Accepting: which ids exist, the inserts. */
  get accept(): CorMessageAccept {
    return this.jobs.accept;
  }

  /** Claiming due messages under a lease. */
  get claims(): CorMessageClaim {
    return this.jobs.claims;
  }

  /** Heartbeats, deletes of delivered messages, failures, releases. */
  get completion(): CorMessageCompletion {
    return this.jobs.completion;
  }

  /** The expiry cleanup. */
  get cleanup(): CorMessageCleanup {
    return this.jobs.cleanup;
  }

  /** What an admin does: counts, lists, pause, resume, retry, delete. */
  get management(): CorMessageManagement {
    return this.jobs.management;
  }

  get sql(): SqlClient {
    return this.on.sql;
  }

  get table(): string {
    return this.on.table;
  }

  /** The jobs built anew with `facts` added to what is known of the table (at startup). */
  configure(facts: CorMessageFacts): void {
    this.jobs = jobsOn(this.on.learnt(facts));
  }

  /** The same table and facts through another client (the deletes' lane, see InboxConnection.openDeleteLane). */
  through(sql: SqlClient): CorMessageStore {
    const store = new CorMessageStore(sql, this.on.prefix);
    store.jobs = jobsOn(this.on.through(sql));
    return store;
  }

  /** See detectCorMessageLayout. Call once the table exists. */
  async detectLayout(): Promise<void> {
    this.configure(await detectCorMessageLayout(this.on));
  }
}
