import { ConfigurableModuleBuilder, type CanActivate, type Provider, type Type } from '@nestjs/common';
import { createDashboardController } from './dashboard.controller';
import { DASHBOARD_ACTION_GUARD, DASHBOARD_GUARD_READS, DASHBOARD_PATH } from './dashboard.constants';
import type { HoldfastDashboardOptions } from './dashboard.options';
import { InvalidDashboardGuardError, InvalidDashboardPathError, InvalidDashboardReadsError } from './errors';

/** forRoot extras: they shape the module itself, so they are known before any factory runs. */
export interface HoldfastDashboardExtras {
  /** Where the page is served (default '/holdfast'); its JSON is at `${path}/api/state`. */
  path?: string;
  /**
   * Allows the inbox actions (POST) to whom it lets through: a CanActivate class (instantiated in
   * the dashboard's module, so its dependencies must be global or exported to it) or instance.
   * Without one the dashboard is read-only: every POST answers 403 and the page has no buttons.
   */
  guard?: Type<CanActivate> | CanActivate;
  /**
   * The guard also stands on the page and on `api/state` (default false: reads are open). Needs
   * `guard`. Applications whose dashboard is reachable beyond their operators want it: the state
   * lists message ids, types and error texts.
   */
  guardReads?: boolean;
  isGlobal?: boolean;
}

export const DEFAULT_DASHBOARD_PATH = '/holdfast';

/** '/holdfast/' → 'holdfast', '/' → '' (the controller's path). */
export function dashboardControllerPath(path: unknown): string {
  if (typeof path !== 'string' || !/^\/[A-Za-z0-9\-._~/]*$/.test(path) || path.includes('//')) {
    throw new InvalidDashboardPathError(path);
  }
  return path.replace(/^\/+|\/+$/g, '');
}

function guardProviders(guard: unknown, guardReads: unknown): Provider[] {
  if (guardReads !== undefined && typeof guardReads !== 'boolean') {
    throw new InvalidDashboardReadsError(`must be a boolean, got ${typeof guardReads}`);
  }
  if (guardReads && guard === undefined) {
    throw new InvalidDashboardReadsError('needs a guard: give forRoot one, or leave guardReads out');
  }
  return [{ provide: DASHBOARD_GUARD_READS, useValue: guardReads === true }, ...actionGuard(guard)];
}

function actionGuard(guard: unknown): Provider[] {
  if (guard === undefined) return [{ provide: DASHBOARD_ACTION_GUARD, useValue: null }];
  if (typeof guard === 'function') {
    const cls = guard as Type<CanActivate>;
    return [cls, { provide: DASHBOARD_ACTION_GUARD, useExisting: cls }];
  }
  if (guard !== null && typeof (guard as CanActivate).canActivate === 'function') {
    return [{ provide: DASHBOARD_ACTION_GUARD, useValue: guard }];
  }
  throw new InvalidDashboardGuardError(guard);
}

export const {
  ConfigurableModuleClass: ConfigurableDashboardModule,
  MODULE_OPTIONS_TOKEN: DASHBOARD_MODULE_OPTIONS,
  OPTIONS_TYPE: DASHBOARD_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: DASHBOARD_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<HoldfastDashboardOptions>({ moduleName: 'HoldfastDashboard' })
  .setClassMethodName('forRoot')
  .setExtras<HoldfastDashboardExtras>(
    { isGlobal: true, path: DEFAULT_DASHBOARD_PATH, guard: undefined, guardReads: false },
    (definition, extras) => {
      const path = dashboardControllerPath(extras.path ?? DEFAULT_DASHBOARD_PATH);
      return {
        ...definition,
        global: extras.isGlobal,
        controllers: [createDashboardController(path)],
        providers: [
          ...(definition.providers ?? []),
          ...guardProviders(extras.guard, extras.guardReads),
          { provide: DASHBOARD_PATH, useValue: path },
        ],
      };
    },
  )
  .build();
