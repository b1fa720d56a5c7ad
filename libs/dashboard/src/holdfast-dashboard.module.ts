import { Module } from '@nestjs/common';
import { DASHBOARD_OPTIONS } from './dashboard.constants';
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
    DashboardRequestGuard,
    DashboardReadsGuard,
    DashboardStateService,
  ],
  exports: [DashboardStateService],
})
export class HoldfastDashboardModule extends ConfigurableDashboardModule {}
