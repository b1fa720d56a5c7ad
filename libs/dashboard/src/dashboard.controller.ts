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
  UseGuards,
  type Type,
} from '@nestjs/common';
import { DASHBOARD_OPTIONS } from './dashboard.constants';
import type { ResolvedDashboardOptions } from './dashboard.options';
import { renderDashboardPage } from './dashboard.page';
import { DashboardActionsGuard } from './dashboard-actions.guard';
import { DashboardReadsGuard, DashboardRequestGuard } from './dashboard-request.guard';
import type { DashboardState } from './dashboard-state';
import { DashboardStateService } from './dashboard-state.service';
import { InvalidDashboardActionError } from './errors';

/** MessageManagement's MessageNotFoundError code. */
const INBOX_NOT_FOUND = 'HOLDFAST_INBOX_NOT_FOUND';

export const DASHBOARD_ACTIONS = ['retry', 'pause', 'resume', 'delete'] as const;
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

    constructor(
      private readonly state: DashboardStateService,
      @Inject(DASHBOARD_OPTIONS) options: ResolvedDashboardOptions,
    ) {
      this.html = renderDashboardPage(options.title);
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
        if (action === 'delete' && !done) throw new NotFoundException(`Inbox message '${id}' does not exist`);
        return { id, action, done };
      } catch (error) {
        // MessageNotFoundError, known by its code: @holdfast/inbox is an optional peer, never imported.
        if ((error as { code?: unknown }).code === INBOX_NOT_FOUND) {
          throw new NotFoundException((error as Error).message);
        }
        throw error;
      }
    }
  }
  return HoldfastDashboardController;
}
