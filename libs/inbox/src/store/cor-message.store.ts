import type { SqlClient } from '@holdfast/core/kit';
import { CorMessageAccept } from './cor-message.accept';
import { CorMessageTable } from './cor-message.base';
import { CorMessageClaim } from './cor-message.claim';
import { CorMessageCleanup } from './cor-message.cleanup';
import { CorMessageCompletion } from './cor-message.completion';
import { CorMessageGroups } from './cor-message.groups';
import { detectCorMessageLayout } from './cor-message.layout';
import { CorMessageManagement } from './cor-message.management';

/**
 * The statements on `<prefix>COR_MESSAGE` through one client, one class per job (each in its own
 * file): callers use the class whose statement they run (`store.claims.claim(…)`). They share
 * one CorMessageTable: the names, and the facts learnt after construction (the time columns'
 * layout, the group table, the NOTIFY channel).
 */
export class CorMessageStore {
  readonly on: CorMessageTable;
  /** Accepting: which ids exist, the inserts. */
  readonly accept: CorMessageAccept;
  /** Claiming due messages under a lease. */
  readonly claims: CorMessageClaim;
  /** Heartbeats, deletes of delivered messages, failures, releases. */
  readonly completion: CorMessageCompletion;
  /** The expiry cleanup. */
  readonly cleanup: CorMessageCleanup;
  /** What an admin does: counts, lists, pause, resume, retry, delete. */
  readonly management: CorMessageManagement;

  constructor(sql: SqlClient, prefix: string, maxRetries = 5) {
    const on = (this.on = new CorMessageTable(sql, prefix, maxRetries));
    const groups = new CorMessageGroups(on);
    this.accept = new CorMessageAccept(on);
    this.claims = new CorMessageClaim(on, groups);
    this.completion = new CorMessageCompletion(on, groups);
    this.cleanup = new CorMessageCleanup(on, groups);
    this.management = new CorMessageManagement(on, groups);
  }

  get sql(): SqlClient {
    return this.on.sql;
  }

  get table(): string {
    return this.on.table;
  }

  /** See detectCorMessageLayout. Call once the table exists. */
  detectLayout(): Promise<void> {
    return detectCorMessageLayout(this.on);
  }
}
