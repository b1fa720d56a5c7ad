import type { MessageInfo } from '@holdfast/inbox';
import type { DashboardMessage, InboxSection } from '../dashboard-state';
import { shownError } from '../error-text';
import type { InboxInstance } from '../holdfast-lookup';
import { holdfastModules } from '../holdfast-modules';

/** One inbox: its counts, its oldest due message, and the first `limit` parked and paused ones. */
export async function readInboxSection(
  { management, clock }: InboxInstance,
  limit: number,
  errorDetails: boolean,
): Promise<InboxSection> {
  const [now, counts, [oldest], parked, paused, pausedTypes] = await Promise.all([
    clock ? clock.now() : Date.now(),
    management.count(),
    management.list({ status: 'due', limit: 1 }),
    management.list({ status: 'parked', limit }),
    management.list({ status: 'paused', limit }),
    management.pausedTypes(),
  ]);
  return {
    counts: { ...counts },
    oldestDue: oldest
      ? { ...dashboardMessage(oldest, errorDetails), ageMs: Math.max(0, now - oldest.inserted.getTime()) }
      : null,
    parked: parked.map((m) => dashboardMessage(m, errorDetails)),
    paused: paused.map((m) => dashboardMessage(m, errorDetails)),
    pausedTypes: pausedTypes.map((p) => ({
      type: p.type,
      pausedBy: p.pausedBy,
      pausedAt: p.pausedAt.toISOString(),
      reason: p.reason ?? null,
    })),
  };
}

/** A message as the page shows it. */
export function dashboardMessage(info: MessageInfo, errorDetails: boolean): DashboardMessage {
  return {
    id: info.id,
    // The one spelling of a type, the inbox's own (namespace:name@revision).
    type: holdfastModules().inbox!.messageTypeLabel(info.type),
    status: info.status,
    retries: info.retries,
    inserted: info.inserted.toISOString(),
    error: shownError(info.error, errorDetails),
  };
}
