import type { SqlClient } from '@holdfast/core';
import type { MessageStatus } from '../inbox-message';
import { CorMessageAccept } from './cor-message.accept';
import { CorMessageTable } from './cor-message.base';
import { CorMessageClaim } from './cor-message.claim';
import { CorMessageCleanup } from './cor-message.cleanup';
import { CorMessageCompletion } from './cor-message.completion';
import { CorMessageGroups } from './cor-message.groups';
import { detectCorMessageLayout } from './cor-message.layout';
import { CorMessageManagement } from './cor-message.management';
import type { Lease, MessageRow, NewMessageRow, Now } from './cor-message.rows';

export type { Lease, MessageRow, NewMessageRow, Now } from './cor-message.rows';

/**
 * Every statement on `<prefix>COR_MESSAGE`, one entry point for the inbox's services. Each job
 * lives in its own file (accept, claim, completion, cleanup, management, the group rows), built
 * from the shared pieces of cor-message.base.ts and the dialect's.
 */
export class CorMessageQueries {
  private readonly on: CorMessageTable;
  private readonly accepting: CorMessageAccept;
  private readonly claiming: CorMessageClaim;
  private readonly completing: CorMessageCompletion;
  private readonly cleaning: CorMessageCleanup;
  private readonly managing: CorMessageManagement;

  constructor(
    readonly sql: SqlClient,
    prefix: string,
    maxRetries = 5,
  ) {
    this.on = new CorMessageTable(sql, prefix, maxRetries);
    const groups = new CorMessageGroups(this.on);
    this.accepting = new CorMessageAccept(this.on);
    this.claiming = new CorMessageClaim(this.on, groups);
    this.completing = new CorMessageCompletion(this.on, groups);
    this.cleaning = new CorMessageCleanup(this.on, groups);
    this.managing = new CorMessageManagement(this.on, groups);
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

  // ---- accept (cor-message.accept.ts) --------------------------------------------------------

  existingIds(ids: readonly string[]): Promise<Set<string>> {
    return this.accepting.existingIds(ids);
  }

  insert(rows: readonly NewMessageRow[], now: Now): Promise<number> {
    return this.accepting.insert(rows, now);
  }

  // ---- delivery (cor-message.claim.ts, cor-message.completion.ts) -----------------------------

  claim(
    limit: number,
    now: Now,
    leaseMs: number,
    hold?: (tx: SqlClient) => Promise<void>,
  ): Promise<{ rows: MessageRow[]; now: number }> {
    return this.claiming.claim(limit, now, leaseMs, hold);
  }

  extendLeases(leases: readonly Lease[], until: number): Promise<Set<string>> {
    return this.completing.extendLeases(leases, until);
  }

  deleteOwned(leases: readonly Lease[]): Promise<number> {
    return this.completing.deleteOwned(leases);
  }

  deleteDelivered(ids: readonly string[]): Promise<number> {
    return this.completing.deleteDelivered(ids);
  }

  recordFailure(
    id: string,
    seenRetries: number,
    error: string,
    delayMs: number | undefined,
    now: Now,
  ): Promise<boolean> {
    return this.completing.recordFailure(id, seenRetries, error, delayMs, now);
  }

  release(ids: readonly string[], delayMs: number, now: Now, error?: string): Promise<number> {
    return this.completing.release(ids, delayMs, now, error);
  }

  // ---- cleanup (cor-message.cleanup.ts) ------------------------------------------------------

  expiredIds(limit: number, now: Now): Promise<string[]> {
    return this.cleaning.expiredIds(limit, now);
  }

  deleteExpired(ids: readonly string[], now: Now): Promise<number> {
    return this.cleaning.deleteExpired(ids, now);
  }

  deleteOrphanGroups(limit: number): Promise<number> {
    return this.cleaning.deleteOrphanGroups(limit);
  }

  // ---- management (cor-message.management.ts) ------------------------------------------------

  list(status: MessageStatus | undefined, limit: number, offset: number, now: number): Promise<MessageRow[]> {
    return this.managing.list(status, limit, offset, now);
  }

  find(id: string, withPayload = false): Promise<MessageRow | undefined> {
    return this.managing.find(id, withPayload);
  }

  counts(now: number): Promise<Record<MessageStatus, number> & { total: number }> {
    return this.managing.counts(now);
  }

  countByType(): Promise<
    { namespace: string | null; name: string; revision: string | null; count: number }[]
  > {
    return this.managing.countByType();
  }

  pause(id: string): Promise<number> {
    return this.managing.pause(id);
  }

  resume(id: string): Promise<number> {
    return this.managing.resume(id);
  }

  retryNow(id: string, now: Now): Promise<number> {
    return this.managing.retryNow(id, now);
  }

  setRetries(id: string, retries: number): Promise<number> {
    return this.managing.setRetries(id, retries);
  }

  delete(id: string): Promise<number> {
    return this.managing.delete(id);
  }
}
