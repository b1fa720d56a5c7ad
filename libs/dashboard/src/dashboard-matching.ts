import type { DashboardStateService } from './dashboard-state.service';

/** Ids read per statement when a bulk action takes everything a filter matches. */
const PAGE = 1000;

/** What a bulk action on everything matching names: a status, and a type or any. */
export interface DashboardMatching {
  status: string;
  /** A type label as the page lists it (`namespace:name[@revision]`, or a name); absent: any type. */
  type?: string;
}

/**
 * Every id `matching` selects in the inbox now, in delivery order, read a page at a time before
 * any is acted on (so that acting, which moves messages out of the status, does not shift the
 * pages): undefined when the application has no such inbox.
 */
export async function matchingIds(
  state: DashboardStateService,
  inbox: string | undefined,
  matching: DashboardMatching,
): Promise<string[] | undefined> {
  const ids: string[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const page = await state.messages({
      inbox,
      status: matching.status,
      type: matching.type,
      offset,
      limit: PAGE,
    });
    if (!page) return undefined;
    ids.push(...page.messages.map((m) => m.id));
    if (page.messages.length < PAGE || ids.length >= page.total) return [...new Set(ids)];
  }
}
