import { BadRequestException, ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { actorOf, DashboardAudit } from './dashboard-audit';
import { matchingIds } from './dashboard-matching';
import {
  inboxParam,
  noInbox,
  type BulkRequest,
  type DashboardAction,
  type TypeActRequest,
} from './dashboard-inbox.requests';
import { DashboardStateService, type DashboardMessageAdmin } from './dashboard-state.service';

/** MessageManagement's MessageNotFoundError code. */
const INBOX_NOT_FOUND = 'HOLDFAST_INBOX_NOT_FOUND';

/** MessageManagement's errors a type pause answers with a 400 (bad type, reason) or a 409 (no pause table). */
const INVALID_ARGUMENT = 'HOLDFAST_INBOX_INVALID_ARGUMENT';
const PAUSE_TABLE_MISSING = 'HOLDFAST_INBOX_PAUSE_TABLE_MISSING';

/** Who asked, for the audit line. */
type Requester = { user?: unknown; ip?: string };

/** MessageNotFoundError, known by its code: @holdfast/inbox is an optional peer, never imported. */
const isNotFound = (error: unknown) => (error as { code?: unknown } | null)?.code === INBOX_NOT_FOUND;

/**
 * The dashboard's actions on inbox messages (retry, pause, resume, delete; one, or many at once)
 * and its payload reads, each audited: what the controller's action routes run once the request
 * is checked.
 */
@Injectable()
export class DashboardInboxActions {
  constructor(
    private readonly state: DashboardStateService,
    private readonly audit: DashboardAudit,
  ) {}

  /** The inbox named (the default one without a name), or a 400/404. */
  management(inbox: unknown): DashboardMessageAdmin {
    const management = this.state.management(inboxParam(inbox));
    if (!management) throw new NotFoundException(noInbox(inbox));
    return management;
  }

  /** One message's payload: JSON as stored, binary as base64; a 404 when there is none. */
  async payload(id: string, inbox?: string): Promise<{ id: string; encoding: string; payload: unknown }> {
    const found = await this.management(inbox).payload(id);
    if (!found) throw new NotFoundException(`Inbox message '${id}' does not exist`);
    const binary = Buffer.isBuffer(found.payload);
    return {
      id,
      encoding: binary ? 'base64' : found.encoding,
      payload: binary ? (found.payload as Buffer).toString('base64') : found.payload,
    };
  }

  /**
   * `action` on each of `ids` alone, or on each message `matching` selects now (read before any is
   * acted on): those done, and those skipped (not found, or not paused for resume).
   */
  async bulk(
    request: Requester,
    { action, ids, matching, inbox }: BulkRequest,
  ): Promise<{ action: string; done: string[]; skipped: string[] }> {
    const management = this.management(inbox);
    const name = inbox as string | undefined;
    const selected = matching ? ((await matchingIds(this.state, name, matching)) ?? []) : ids;
    const audited = matching
      ? `${action} (matching status ${matching.status}, ${matching.type ? `type ${matching.type}` : 'any type'})`
      : action;
    const done: string[] = [];
    const skipped: string[] = [];
    const unique = new Set(selected);
    try {
      for (const id of unique) {
        const acted = await this.applyOrSkip(management, action, id);
        (acted ? done : skipped).push(id);
      }
    } catch (error) {
      this.audit.acted(request, audited, name, unique.size, done, error);
      throw error;
    }
    this.audit.acted(request, audited, name, unique.size, done);
    return { action, done, skipped };
  }

  /** `action` on one message; a 404 for a message not found (delete, or the inbox's own error). */
  async act(
    request: Requester,
    { action, id, inbox }: { action: DashboardAction; id: string; inbox: string | undefined },
  ): Promise<{ id: string; action: string; done: boolean }> {
    const management = this.management(inbox);
    try {
      const done = await apply(management, action, id);
      this.audit.acted(request, action, inbox, 1, done ? [id] : []);
      if (action === 'delete' && !done) throw new NotFoundException(`Inbox message '${id}' does not exist`);
      return { id, action, done };
    } catch (error) {
      if (isNotFound(error)) {
        this.audit.acted(request, action, inbox, 1, []);
        throw new NotFoundException((error as Error).message);
      }
      if (!(error instanceof NotFoundException)) this.audit.acted(request, action, inbox, 1, [], error);
      throw error;
    }
  }

  /**
   * Pauses or resumes a message type across the cluster, as the guard's user; audited. A resume
   * of a type that is not paused answers `done: false`.
   */
  async actOnType(
    request: Requester,
    { action, type, reason, inbox }: TypeActRequest,
  ): Promise<{ type: string; action: string; done: boolean }> {
    const management = this.management(inbox);
    const actor = actorOf(request);
    let done = true;
    try {
      if (action === 'pause') await management.pauseType(type, { actor, reason });
      else done = await management.resumeType(type, { actor });
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (code === INVALID_ARGUMENT) throw new BadRequestException((error as Error).message);
      if (code === PAUSE_TABLE_MISSING) throw new ConflictException((error as Error).message);
      throw error;
    }
    this.audit.typeActed(request, { action: `${action}-type`, type, reason, inbox, done });
    return { type, action, done };
  }

  /** One action on one message: false when the message does not exist (or resume found it not paused). */
  private async applyOrSkip(management: DashboardMessageAdmin, action: DashboardAction, id: string) {
    try {
      return await apply(management, action, id);
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }
}

/** retry and pause are done (or throw); resume and delete say whether they changed anything. */
async function apply(
  management: DashboardMessageAdmin,
  action: DashboardAction,
  id: string,
): Promise<boolean> {
  if (action === 'retry') await management.retryNow(id);
  else if (action === 'pause') await management.pause(id);
  else if (action === 'resume') return management.resume(id);
  else return management.delete(id);
  return true;
}
