import { matchingIds, type DashboardMatching } from './dashboard-matching';
import {
  BadRequestException,
  Body,
  Controller,
  Get,
  Header,
  HttpCode,
  Inject,
  NotFoundException,
  Param,
  Post,
  Query,
  Req,
  UseGuards,
  type Type,
} from '@nestjs/common';
import { DashboardAudit } from './dashboard-audit';
import { DASHBOARD_OPTIONS } from './dashboard.constants';
import type { ResolvedDashboardOptions } from './dashboard.options';
import { renderDashboardPage } from './dashboard.page';
import { DashboardActionsGuard } from './dashboard-actions.guard';
import { DashboardReadsGuard, DashboardRequestGuard } from './dashboard-request.guard';
import type { DashboardState } from './dashboard-state';
import { DashboardStateService, type DashboardMessageAdmin } from './dashboard-state.service';
import { InvalidDashboardActionError } from './errors';

/** MessageManagement's MessageNotFoundError code. */
const INBOX_NOT_FOUND = 'HOLDFAST_INBOX_NOT_FOUND';

export const DASHBOARD_ACTIONS = ['retry', 'pause', 'resume', 'delete'] as const;
const LISTED_STATUSES = ['parked', 'paused', 'due', 'retrying'] as const;
/** The most ids one bulk action takes (each is its own statement). */
const BULK_LIMIT = 1000;

function noInbox(inbox: unknown): string {
  return inbox === undefined
    ? 'This application has no InboxModule'
    : `This application has no inbox named '${String(inbox)}'`;
}

function badRequest(what: string, value: unknown, expected: string): BadRequestException {
  return new BadRequestException(new InvalidDashboardActionError(what, value, expected).message);
}

/** A non-negative integer query parameter, or `fallback` when absent. */
function intParam(name: string, raw: unknown, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw badRequest(name, raw, `must be an integer from ${min} to ${max}`);
  }
  return value;
}
export type DashboardAction = (typeof DASHBOARD_ACTIONS)[number];

/**
 * The dashboard's routes under `path`, decided at forRoot time: Nest reads a controller's path
 * from its class metadata, so each forRoot gets its own class with `@Controller(path)`. (A
 * RouterModule entry would do it too, but it would add a prefix the application's own
 * RouterModule tree could nest or clash with; a class of our own keeps the path in one place.)
 */
export function createDashboardController(path: string): Type<unknown> {
  @Controller(path)
  class HoldfastDashboardController {
    private readonly html: string;
    private readonly limit: number;

    constructor(
      private readonly state: DashboardStateService,
      private readonly audit: DashboardAudit,
      @Inject(DASHBOARD_OPTIONS) options: ResolvedDashboardOptions,
    ) {
      this.html = renderDashboardPage(options.title);
      this.limit = options.messageLimit;
    }

    /** The page: HTML with its CSS and script inline; it polls `api/state` next to it. */
    @Get()
    @UseGuards(DashboardReadsGuard)
    @Header('Content-Type', 'text/html; charset=utf-8')
    @Header('Cache-Control', 'no-store')
    page(): string {
      return this.html;
    }

    @Get('api/state')
    @UseGuards(DashboardReadsGuard)
    @Header('Cache-Control', 'no-store')
    read(): Promise<DashboardState> {
      return this.state.read();
    }

    /**
     * A page of an inbox's messages: `?status=parked|paused|due|retrying&offset=&limit=&inbox=`,
     * with `&type=` those of one type only (`namespace/name[@revision]` as listed, or a name), or
     * `?id=` for one message whatever its status. Guarded as the state is.
     */
    @Get('api/inbox/messages')
    @UseGuards(DashboardReadsGuard)
    @Header('Cache-Control', 'no-store')
    async messages(@Query() query: Record<string, unknown>): Promise<unknown> {
      const status = query.status ?? 'parked';
      if (!LISTED_STATUSES.includes(status as (typeof LISTED_STATUSES)[number])) {
        throw badRequest('status', status, `is not one of ${LISTED_STATUSES.join(', ')}`);
      }
      const inbox = query.inbox;
      if (inbox !== undefined && (typeof inbox !== 'string' || inbox === '')) {
        throw badRequest('inbox', inbox, 'must be the name of an inbox when given');
      }
      const id = query.id;
      if (id !== undefined && (typeof id !== 'string' || id === '')) {
        throw badRequest('id', id, 'must be a non-empty message id when given');
      }
      const type = query.type;
      if (type !== undefined && (typeof type !== 'string' || type === '')) {
        throw badRequest('type', type, 'must be a message type (namespace/name or name) when given');
      }
      if (type !== undefined && id !== undefined) throw badRequest('type', type, 'goes without id');
      const page = await this.state.messages({
        inbox,
        status: status as string,
        id,
        type,
        offset: intParam('offset', query.offset, 0, 0, Number.MAX_SAFE_INTEGER),
        limit: intParam('limit', query.limit, this.limit, 1, 1000),
      });
      if (!page) throw new NotFoundException(noInbox(inbox));
      return page;
    }

    /**
     * One message's payload, `?inbox=<name>` for a named inbox: JSON as stored, binary as base64.
     * Payloads are application data: only whom the guard lets through sees them (403 without one).
     */
    @Get('api/inbox/payload/:id')
    @UseGuards(DashboardActionsGuard)
    @Header('Cache-Control', 'no-store')
    async payload(
      @Param('id') id: string,
      @Query('inbox') inbox?: string,
    ): Promise<{ id: string; encoding: string; payload: unknown }> {
      const found = await this.management(inbox).payload(id);
      if (!found) throw new NotFoundException(`Inbox message '${id}' does not exist`);
      const payload = Buffer.isBuffer(found.payload) ? found.payload.toString('base64') : found.payload;
      return { id, encoding: Buffer.isBuffer(found.payload) ? 'base64' : found.encoding, payload };
    }

    /**
     * One action on many messages: `{ "action": "retry", "ids": ["..."], "inbox"?: "name" }`, as
     * the single actions are guarded, or on every message a filter matches now, however many:
     * `{ "action": "retry", "matching": { "status": "parked", "type"?: "demo:note" } }` (the page
     * shows their count before the operator confirms). Each id is acted on alone; the answer
     * lists those done and those skipped (not found, or for resume not paused).
     */
    @Post('api/inbox/bulk')
    @HttpCode(200)
    @UseGuards(DashboardRequestGuard, DashboardActionsGuard)
    async bulk(
      @Body() body: unknown,
      @Req() request: { user?: unknown; ip?: string },
    ): Promise<{ action: string; done: string[]; skipped: string[] }> {
      const { action, inbox, matching } = (body ?? {}) as {
        action?: unknown;
        inbox?: unknown;
        matching?: unknown;
      };
      let { ids } = (body ?? {}) as { ids?: unknown };
      if (!DASHBOARD_ACTIONS.includes(action as DashboardAction)) {
        throw badRequest('action', action ?? null, `is not one of ${DASHBOARD_ACTIONS.join(', ')}`);
      }
      let what: string | undefined;
      if (matching !== undefined) {
        // Everything a filter matches (the page shows the count before the operator confirms).
        if (ids !== undefined) throw badRequest('ids', '(given)', 'go without matching');
        const filter = this.matching(matching);
        this.management(inbox);
        ids = (await matchingIds(this.state, inbox as string | undefined, filter)) ?? [];
        what = `matching status ${filter.status}, ${filter.type ? `type ${filter.type}` : 'any type'}`;
      } else if (
        !Array.isArray(ids) ||
        ids.length === 0 ||
        ids.length > BULK_LIMIT ||
        !ids.every((id) => typeof id === 'string' && id !== '')
      ) {
        throw badRequest('ids', ids ?? null, `must be a list of 1 to ${BULK_LIMIT} message ids`);
      }
      const audited = what ? `${action as string} (${what})` : (action as string);
      const management = this.management(inbox);
      const done: string[] = [];
      const skipped: string[] = [];
      const unique = new Set(ids as string[]);
      try {
        for (const id of unique) {
          const acted = await this.apply(management, action as DashboardAction, id);
          (acted ? done : skipped).push(id);
        }
      } catch (error) {
        this.audit.acted(request, audited, inbox as string | undefined, unique.size, done, error);
        throw error;
      }
      this.audit.acted(request, audited, inbox as string | undefined, unique.size, done);
      return { action: action as string, done, skipped };
    }

    /** A bulk body's `matching`: `{ status, type? }`, the status one the page lists. */
    private matching(matching: unknown): DashboardMatching {
      const { status, type } = (matching ?? {}) as { status?: unknown; type?: unknown };
      if (typeof matching !== 'object' || matching === null || Array.isArray(matching)) {
        throw badRequest('matching', matching, 'must be { "status": ..., "type"?: ... }');
      }
      if (!LISTED_STATUSES.includes(status as (typeof LISTED_STATUSES)[number])) {
        throw badRequest('matching.status', status ?? null, `is not one of ${LISTED_STATUSES.join(', ')}`);
      }
      if (type !== undefined && (typeof type !== 'string' || type === '')) {
        throw badRequest('matching.type', type, 'must be a message type (namespace:name or name) when given');
      }
      return { status: status as string, type: type as string | undefined };
    }

    /** The inbox named in a request body (the default one without a name), or a 400/404. */
    private management(inbox: unknown): DashboardMessageAdmin {
      if (inbox !== undefined && (typeof inbox !== 'string' || inbox === '')) {
        throw badRequest('inbox', inbox, 'must be the name of an inbox when given');
      }
      const management = this.state.management(inbox);
      if (!management) throw new NotFoundException(noInbox(inbox));
      return management;
    }

    /** One action on one message: false when the message does not exist (or resume found it not paused). */
    private async apply(
      management: DashboardMessageAdmin,
      action: DashboardAction,
      id: string,
    ): Promise<boolean> {
      try {
        if (action === 'retry') await management.retryNow(id);
        else if (action === 'pause') await management.pause(id);
        else if (action === 'resume') return await management.resume(id);
        else return await management.delete(id);
        return true;
      } catch (error) {
        // MessageNotFoundError, known by its code: @holdfast/inbox is an optional peer, never imported.
        if ((error as { code?: unknown }).code === INBOX_NOT_FOUND) return false;
        throw error;
      }
    }

    /**
     * retry | pause | resume | delete on one inbox message, `{ "id": "...", "inbox"?: "name" }`
     * (the default inbox without `inbox`): 403 without a guard. Only as JSON with the
     * X-Holdfast-Request header (DashboardRequestGuard, before the user's guard).
     */
    @Post('api/inbox/:action')
    @HttpCode(200)
    @UseGuards(DashboardRequestGuard, DashboardActionsGuard)
    async act(
      @Param('action') action: string,
      @Body() body: unknown,
      @Req() request: { user?: unknown; ip?: string },
    ): Promise<{ id: string; action: string; done: boolean }> {
      if (!DASHBOARD_ACTIONS.includes(action as DashboardAction)) {
        throw new BadRequestException(
          new InvalidDashboardActionError('action', action, `is not one of ${DASHBOARD_ACTIONS.join(', ')}`)
            .message,
        );
      }
      const { id, inbox } = (body ?? {}) as { id?: unknown; inbox?: unknown };
      if (typeof id !== 'string' || id === '') {
        throw new BadRequestException(
          new InvalidDashboardActionError('id', id ?? null, 'must be a non-empty string in the JSON body')
            .message,
        );
      }
      if (inbox !== undefined && (typeof inbox !== 'string' || inbox === '')) {
        throw new BadRequestException(
          new InvalidDashboardActionError('inbox', inbox, 'must be the name of an inbox when given').message,
        );
      }
      const management = this.state.management(inbox);
      if (!management) {
        throw new NotFoundException(
          inbox === undefined
            ? 'This application has no InboxModule'
            : `This application has no inbox named '${inbox}'`,
        );
      }
      try {
        let done = true;
        if (action === 'retry') await management.retryNow(id);
        else if (action === 'pause') await management.pause(id);
        else if (action === 'resume') done = await management.resume(id);
        else done = await management.delete(id);
        this.audit.acted(request, action, inbox as string | undefined, 1, done ? [id] : []);
        if (action === 'delete' && !done) throw new NotFoundException(`Inbox message '${id}' does not exist`);
        return { id, action, done };
      } catch (error) {
        // MessageNotFoundError, known by its code: @holdfast/inbox is an optional peer, never imported.
        if ((error as { code?: unknown }).code === INBOX_NOT_FOUND) {
          this.audit.acted(request, action, inbox as string | undefined, 1, []);
          throw new NotFoundException((error as Error).message);
        }
        if (!(error instanceof NotFoundException)) {
          this.audit.acted(request, action, inbox as string | undefined, 1, [], error);
        }
        throw error;
      }
    }
  }
  return HoldfastDashboardController;
}
