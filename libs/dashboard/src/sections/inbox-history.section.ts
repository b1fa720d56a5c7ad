import type { HistoryEntry, InboxStatsMinute } from '@holdfast/inbox';
import { shownError } from '../error-text';
import type { Management } from '../holdfast-lookup';
import type { DashboardHistory, DashboardStats } from './inbox-history.types';

export type { DashboardHistory, DashboardHistoryEntry, DashboardStats } from './inbox-history.types';

export async function readMessageHistory(
  management: Management,
  id: string,
  errorDetails: boolean,
): Promise<DashboardHistory> {
  const entries: HistoryEntry[] = await management.history(id, { limit: 200 });
  return {
    id,
    entries: entries.map((e) => ({
      at: e.at.toISOString(),
      outcome: e.outcome,
      attempt: e.attempt,
      node: e.node,
      error: shownError(e.error, errorDetails),
    })),
  };
}

export async function readInboxStats(
  management: Management,
  clock: { now(): Promise<number> } | undefined,
): Promise<DashboardStats> {
  const [now, minutes] = await Promise.all([
    clock ? clock.now() : Date.now(),
    management.stats({ minutes: 60 }) as Promise<InboxStatsMinute[]>,
  ]);
  return {
    now: new Date(now).toISOString(),
    minutes: minutes.map((m) => ({ ...m, minute: m.minute.toISOString() })),
  };
}
