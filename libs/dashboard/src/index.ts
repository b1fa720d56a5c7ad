export { HoldfastDashboardModule } from './holdfast-dashboard.module';
export type { HoldfastDashboardExtras } from './dashboard.module-definition';
export type { HoldfastDashboardOptions } from './dashboard.options';
export { DashboardStateService, type DashboardMessagePage } from './dashboard-state.service';
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
