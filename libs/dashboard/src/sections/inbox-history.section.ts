import type { HistoryEntry, InboxStatsMinute } from '@holdfast/inbox';
import { shownError } from '../error-text';
import type { Management } from '../holdfast-lookup';

/** One outcome of a message as the page shows it. */
export interface DashboardHistoryEntry {
  at: string;
  outcome: string;
  attempt: number;
  node: string;
  error: string | null;
}

/** `api/inbox/history`: a message's attempts, oldest first (empty without the `history` option). */
export interface DashboardHistory {
  id: string;
  entries: DashboardHistoryEntry[];
}

/** `api/inbox/stats`: the minutes of the last hour that have figures (empty without `stats`). */
export interface DashboardStats {
  /** The database clock when read: the charts end here. */
  now: string;
  minutes: Array<{
    minute: string;
    delivered: number;
    failed: number;
    parked: number;
    depth: number | null;
    parkedNow: number | null;
    leader: string | null;
  }>;
}

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
