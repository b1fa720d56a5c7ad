import {
  Body,
  Controller,
  Get,
  Header,
  HttpCode,
  Inject,
  Injectable,
  NotFoundException,
  Param,
  Post,
  Query,
  Req,
  UseGuards,
  type Type,
} from '@nestjs/common';
import { DASHBOARD_OPTIONS } from './dashboard.constants';
import type { ResolvedDashboardOptions } from './dashboard.options';
import { renderDashboardPage } from './dashboard.page';
import { DashboardActionsGuard } from './dashboard-actions.guard';
import { DashboardInboxActions } from './dashboard-inbox-actions.service';
import { actRequest, bulkBody, messagesQuery, noInbox, typeActRequest } from './dashboard-inbox.requests';
import { DashboardReadsGuard, DashboardRequestGuard } from './dashboard-request.guard';
import type { DashboardState } from './dashboard-state';
import { DashboardStateService } from './dashboard-state.service';
import { historyQuery } from './dashboard-history.requests';
import type { DashboardHistory, DashboardStats } from './sections/inbox-history.types';

export { DASHBOARD_ACTIONS, type DashboardAction } from './dashboard-inbox.requests';

/**
 * The dashboard's routes. Each route checks its request (dashboard-inbox.requests.ts) and hands it
 * on: reads to DashboardStateService, actions to DashboardInboxActions. Mounted under its path by
 * createDashboardController (Nest finds the routes, guards and constructor of a base class).
 */
@Injectable()
class DashboardRoutes {
  private readonly html: string;
  private readonly limit: number;

  constructor(
    private readonly state: DashboardStateService,
    private readonly actions: DashboardInboxActions,
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
    const checked = messagesQuery(query, this.limit);
    const page = await this.state.messages(checked);
    if (!page) throw new NotFoundException(noInbox(checked.inbox));
    return page;
  }

  /**
   * A message's attempts, oldest first, each with its outcome and error: `?id=&inbox=` (the
   * inbox's `history` option; empty without it, and the message itself may be gone).
   */
  @Get('api/inbox/history')
  @UseGuards(DashboardReadsGuard)
  @Header('Cache-Control', 'no-store')
  async history(@Query() query: Record<string, unknown>): Promise<DashboardHistory> {
    const { id, inbox } = historyQuery(query);
    const found = await this.state.history(inbox, id);
    if (!found) throw new NotFoundException(noInbox(inbox));
    return found;
  }

  /** The last hour of an inbox per minute, for the page's charts: `?inbox=` (the `stats` option). */
  @Get('api/inbox/stats')
  @UseGuards(DashboardReadsGuard)
  @Header('Cache-Control', 'no-store')
  async stats(@Query('inbox') inbox?: string): Promise<DashboardStats> {
    const found = await this.state.stats(inbox || undefined);
    if (!found) throw new NotFoundException(noInbox(inbox));
    return found;
  }

  /**
   * One message's payload, `?inbox=<name>` for a named inbox: JSON as stored, binary as base64.
   * Payloads are application data: only whom the guard lets through sees them (403 without one).
   */
  @Get('api/inbox/payload/:id')
  @UseGuards(DashboardActionsGuard)
  @Header('Cache-Control', 'no-store')
  payload(
    @Param('id') id: string,
    @Query('inbox') inbox?: string,
  ): Promise<{ id: string; encoding: string; payload: unknown }> {
    return this.actions.payload(id, inbox);
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
  bulk(
    @Body() body: unknown,
    @Req() request: { user?: unknown; ip?: string },
  ): Promise<{ action: string; done: string[]; skipped: string[] }> {
    return this.actions.bulk(request, bulkBody(body));
  }

  /**
   * pause | resume a message type on every node, `{ "type": "shop:order", "reason"?: "...",
   * "inbox"?: "name" }`, as the guard's user (MessageManagement.pauseType, resumeType); audited.
   * Guarded and checked as the message actions are.
   */
  @Post('api/inbox/types/:action')
  @HttpCode(200)
  @UseGuards(DashboardRequestGuard, DashboardActionsGuard)
  actOnType(
    @Param('action') action: string,
    @Body() body: unknown,
    @Req() request: { user?: unknown; ip?: string },
  ): Promise<{ type: string; action: string; done: boolean }> {
    return this.actions.actOnType(request, typeActRequest(action, body));
  }

  /**
   * retry | pause | resume | delete on one inbox message, `{ "id": "...", "inbox"?: "name" }`
   * (the default inbox without `inbox`): 403 without a guard. Only as JSON with the
   * X-Holdfast-Request header (DashboardRequestGuard, before the user's guard).
   */
  @Post('api/inbox/:action')
  @HttpCode(200)
  @UseGuards(DashboardRequestGuard, DashboardActionsGuard)
  act(
    @Param('action') action: string,
    @Body() body: unknown,
    @Req() request: { user?: unknown; ip?: string },
  ): Promise<{ id: string; action: string; done: boolean }> {
    return this.actions.act(request, actRequest(action, body));
  }
}

/**
 * The dashboard's routes under `path`, decided at forRoot time: Nest reads a controller's path
 * from its class metadata, so each forRoot gets its own class with `@Controller(path)`. (A
 * RouterModule entry would do it too, but it would add a prefix the application's own
 * RouterModule tree could nest or clash with; a class of our own keeps the path in one place.)
 */
export function createDashboardController(path: string): Type<unknown> {
  @Controller(path)
  class HoldfastDashboardController extends DashboardRoutes {}
  return HoldfastDashboardController;
}
