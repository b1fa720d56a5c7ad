import type { FailoverSection } from '../dashboard-state';
import { shownError } from '../error-text';
import type { HoldfastLookup } from '../holdfast-lookup';
import { holdfastModules } from '../holdfast-modules';

type FailoverStoreLike = { description?: string; countLive?(name: string, now: Date): Promise<number> };

/** The default FailoverModule: each failover's calls, live entries and last error; the store's state. */
export async function readFailoverSection(
  lookup: HoldfastLookup,
  errorDetails: boolean,
): Promise<FailoverSection> {
  const f = holdfastModules().failover!;
  const registry = lookup.defaultFailover(f.FAILOVER_STATUS_TOKENS.registry)!;
  const metrics = lookup.defaultFailover(f.FailoverMetrics);
  const writer = lookup.defaultFailover(f.FAILOVER_STATUS_TOKENS.writer);
  const store = lookup.defaultFailover<FailoverStoreLike>(f.getFailoverStoreToken());
  const now = new Date();
  const failovers = await Promise.all(
    registry.list().map(async ({ metadata, declaredOn }) => {
      const tally = metrics?.byFailover.get(metadata.name);
      const liveEntries = store?.countLive
        ? await store.countLive(metadata.effectiveName, now).catch(() => null)
        : null;
      return {
        name: metadata.name,
        declaredOn,
        liveEntries,
        calls: { ...(tally?.outcomes ?? {}) },
        staleServed: tally?.outcomes.recovered ?? 0,
        lastError: tally?.lastError
          ? {
              message: shownError(tally.lastError.message, errorDetails),
              at: tally.lastError.at.toISOString(),
            }
          : null,
      };
    }),
  );
  return {
    store: store?.description ?? 'custom',
    pendingWrites: writer?.pending ?? 0,
    storeErrors: metrics?.storeErrors ?? 0,
    failovers: failovers.sort((a, b) => a.name.localeCompare(b.name)),
  };
}
