import { Inject, Module, RequestMethod, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { DashboardAudit } from './dashboard-audit';
import { DashboardInboxActions } from './dashboard-inbox-actions.service';
import { DASHBOARD_OPTIONS, DASHBOARD_PATH } from './dashboard.constants';
import { ConfigurableDashboardModule, DASHBOARD_MODULE_OPTIONS } from './dashboard.module-definition';
import { resolveDashboardOptions, type HoldfastDashboardOptions } from './dashboard.options';
import { DashboardActionsGuard } from './dashboard-actions.guard';
import { DashboardReadsGuard, DashboardRequestGuard } from './dashboard-request.guard';
import { DashboardStateService } from './dashboard-state.service';

/**
 * One HTML page (and the JSON it polls) showing the Holdfast modules the application imports:
 * failovers, simba mutexes, the locker's master/standby and the inbox, with the inbox's admin
 * actions behind the `guard` given to forRoot.
 *
 *   HoldfastDashboardModule.forRoot({ path: '/holdfast', guard: AdminGuard })
 */
@Module({
  providers: [
    {
      provide: DASHBOARD_OPTIONS,
      useFactory: (options: HoldfastDashboardOptions) => resolveDashboardOptions(options),
      inject: [DASHBOARD_MODULE_OPTIONS],
    },
    DashboardActionsGuard,
    DashboardAudit,
    DashboardRequestGuard,
    DashboardReadsGuard,
    DashboardStateService,
    DashboardInboxActions,
  ],
  exports: [DashboardStateService],
})
export class HoldfastDashboardModule extends ConfigurableDashboardModule implements NestModule {
  constructor(@Inject(DASHBOARD_PATH) private readonly path: string) {
    super();
  }

  /**
   * `<path>/` answers as `<path>` does: Express matches it loosely, Fastify does not (404), and Nest
   * strips the slash from every route it registers. A middleware on the page's own path sends
   * the slashed form to the page, relative to where it was asked, so a proxy's prefix is kept.
   */
  configure(consumer: MiddlewareConsumer): void {
    if (!this.path) return;
    const page = this.path.split('/').pop()!;
    consumer
      .apply((request: RawRequest, response: RawResponse, next: () => void) => {
        const url = request.originalUrl ?? request.url ?? '';
        const query = url.indexOf('?');
        const pathname = query < 0 ? url : url.slice(0, query);
        if (!pathname.endsWith('/')) return next();
        response.statusCode = 301;
        response.setHeader('Location', `../${page}${query < 0 ? '' : url.slice(query)}`);
        response.end();
      })
      .forRoutes({ path: this.path, method: RequestMethod.GET });
  }
}

/** The Node request and response Express and Fastify (through middie) hand a middleware. */
interface RawRequest {
  originalUrl?: string;
  url?: string;
}
interface RawResponse {
  statusCode: number;
  setHeader(name: string, value: string): void;
  end(): void;
}
