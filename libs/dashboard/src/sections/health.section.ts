import type { Type } from '@nestjs/common';
import type { DashboardState } from '../dashboard-state';
import { shownError } from '../error-text';
import type { HoldfastLookup } from '../holdfast-lookup';
import { holdfastModules } from '../holdfast-modules';

type Indicator = Type<{ isHealthy(key?: string): Promise<Record<string, unknown>> }>;

/**
 * Each present module's health indicator (the default instance's), as terminus reads it: one
 * entry per module, `down` with its reason when the indicator says so or throws.
 */
export async function readHealth(
  lookup: HoldfastLookup,
  errorDetails: boolean,
): Promise<DashboardState['health']> {
  const m = holdfastModules();
  const indicators: Array<[string, Indicator]> = [];
  if (m.failover) indicators.push(['failover', m.failover.FailoverHealthIndicator]);
  if (m.simba) indicators.push(['simba', m.simba.SimbaHealthIndicator]);
  if (m.locker) indicators.push(['locker', m.locker.LockerHealthIndicator]);
  if (m.inbox) indicators.push(['inbox', m.inbox.InboxHealthIndicator]);
  const health: DashboardState['health'] = {};
  await Promise.all(
    indicators.map(async ([name, token]) => {
      const indicator = lookup.optional(token);
      if (!indicator) return;
      try {
        const answer = (await indicator.isHealthy(name))[name] as DashboardState['health'][string];
        health[name] = answer ?? { status: 'down', error: 'no answer' };
      } catch (error) {
        const text = error instanceof Error ? error.message : String(error);
        health[name] = { status: 'down', error: shownError(text, errorDetails) };
      }
    }),
  );
  return Object.fromEntries(Object.entries(health).sort(([a], [b]) => a.localeCompare(b)));
}
