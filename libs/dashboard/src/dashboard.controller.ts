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
import { MessageNotFoundError } from '@holdfast/inbox';
import { DASHBOARD_OPTIONS } from './dashboard.constants';
import type { ResolvedDashboardOptions } from './dashboard.options';
import { renderDashboardPage } from './dashboard.page';
import { DashboardActionsGuard } from './dashboard-actions.guard';
import type { DashboardState } from './dashboard-state';
import { DashboardStateService } from './dashboard-state.service';
import { InvalidDashboardActionError } from './errors';

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
    @Header('Content-Type', 'text/html; charset=utf-8')
    @Header('Cache-Control', 'no-store')
    page(): string {
      return this.html;
    }

    @Get('api/state')
    @Header('Cache-Control', 'no-store')
    read(): Promise<DashboardState> {
      return this.state.read();
    }

    /**
     * retry | pause | resume | delete on one inbox message, `{ "id": "...", "inbox"?: "name" }`
     * (the default inbox without `inbox`): 403 without a guard.
     */
    @Post('api/inbox/:action')
    @HttpCode(200)
    @UseGuards(DashboardActionsGuard)
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
        if (action === 'delete' && !done) throw new MessageNotFoundError(id);
        return { id, action, done };
      } catch (error) {
        if (error instanceof MessageNotFoundError) throw new NotFoundException(error.message);
        throw error;
      }
    }
  }
  return HoldfastDashboardController;
}
