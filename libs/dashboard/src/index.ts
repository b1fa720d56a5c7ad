export { HoldfastDashboardModule } from './holdfast-dashboard.module';
export {
  DASHBOARD_MODULE_OPTIONS,
  DASHBOARD_OPTIONS_TYPE,
  DASHBOARD_ASYNC_OPTIONS_TYPE,
  DEFAULT_DASHBOARD_PATH,
  type HoldfastDashboardExtras,
} from './dashboard.module-definition';
export type { HoldfastDashboardOptions } from './dashboard.options';
export { DashboardStateService } from './dashboard-state.service';
export { DASHBOARD_ACTIONS, type DashboardAction } from './dashboard.controller';
export type {
  DashboardState,
  DashboardMessage,
  FailoverSection,
  SimbaSection,
  LockerSection,
  InboxSection,
  Section,
} from './dashboard-state';
export * from './errors';
