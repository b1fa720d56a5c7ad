import { isThisInstance } from '@holdfast/core/kit';
import type { SimbaSection } from '../dashboard-state';
import type { HoldfastLookup } from '../holdfast-lookup';
import { holdfastModules } from '../holdfast-modules';

/**
 * Every mutex of Simba's table (Simba's status read-model, readSimbaStatus), with what this
 * instance contends for and owns; a mutex contended here that has no row yet is listed free.
 */
export async function readSimbaSection(lookup: HoldfastLookup): Promise<SimbaSection> {
  const simba = holdfastModules().simba!;
  const registry = lookup.optional(simba.MutexContendRegistry)!;
  const options = lookup.optional<{ dataSource?: unknown; tablePrefix?: string }>(
    simba.SIMBA_STATUS_TOKENS.options,
  );
  const sql = lookup.sqlClient(options?.dataSource);
  const status = await simba.readSimbaStatus(sql, { tablePrefix: options?.tablePrefix ?? '' });
  const local = new Map(registry.all().map((s) => [s.mutex, s]));
  const mutexes: SimbaSection['mutexes'] = (status.mutexes ?? []).map((row) => {
    const here = local.get(row.mutex);
    return {
      ...row,
      ownedHere:
        row.owner !== null && ((!!here && row.owner === here.contenderId) || isThisInstance(row.owner)),
      contendedHere: !!here,
      fencingToken: row.owner === null ? null : row.fencingToken,
    };
  });
  // A mutex contended here that has no row yet (the first contention has not run).
  for (const [mutex] of local) {
    if (!mutexes.some((m) => m.mutex === mutex)) {
      mutexes.push({
        mutex,
        owner: null,
        ownedHere: false,
        contendedHere: true,
        fencingToken: null,
        state: 'free',
        expiresInMs: null,
      });
    }
  }
  return { databaseNow: status.databaseNow, mutexes };
}
