/**
 * #43: SimbaModule `spread: ['shard-']` spreads the mutexes of a group over the instances that
 * contend for them (without it, every one went to the instance that tried first): each instance
 * holds its share, nothing moves while the instances stay the same, an instance that leaves hands
 * its share to the others and one that joins gets its share, and there are never two owners.
 * Instances are Nest applications of their own on one DataSource.
 */
import type { INestApplicationContext } from '@nestjs/common';
import { describeEachDatabase } from '@holdfast/testing';
import { InvalidOptionsError } from '@holdfast/core';
import { InvalidMutexNameError, MutexContendServiceFactory, type MutexContendService } from '../src';
import { MutexOwnerRepository } from '../src/internal';
import { resolveSimbaOptions } from '../src/options/simba-options.schema';
import { createSimbaApp, waitUntil } from './simba-test.support';

const SHARDS = 12;
const FAST = { ttl: '1s', transition: '600ms', standbyPoll: '100ms', spread: ['shard-'] };

describe('spread options', () => {
  it('refuses a spread that is not a list of distinct non-empty prefixes, naming the option', () => {
    expect(() => resolveSimbaOptions({ spread: 'shard-' as unknown as string[] })).toThrow(
      InvalidOptionsError,
    );
    expect(() => resolveSimbaOptions({ spread: [''] })).toThrow(/spread/);
    expect(() => resolveSimbaOptions({ spread: ['a', 'a'] })).toThrow(/spread/);
    expect(resolveSimbaOptions({}).spread).toEqual([]);
  });
});

describeEachDatabase('spread groups', (ctx) => {
  interface Instance {
    name: string;
    app: INestApplicationContext;
    services: MutexContendService[];
  }
  const instances: Instance[] = [];
  /** Who believes it owns each mutex now, by its callbacks; and every time two did at once. */
  const holders = new Map<string, Set<string>>();
  const overlaps: string[] = [];
  let acquisitions = 0;

  async function start(name: string): Promise<Instance> {
    const app = await createSimbaApp({ ...ctx, prefix: ctx.prefix }, FAST);
    const factory = app.get(MutexContendServiceFactory);
    const services = Array.from({ length: SHARDS }, (_, i) => {
      const mutex = `shard-${String(i).padStart(2, '0')}`;
      return factory.createMutexContendService({
        mutex,
        contenderId: name,
        onAcquired: () => {
          const set = holders.get(mutex) ?? new Set<string>();
          if (set.size) overlaps.push(`${mutex}: ${[...set].join(', ')} and ${name}`);
          set.add(name);
          holders.set(mutex, set);
          acquisitions++;
        },
        onReleased: () => void holders.get(mutex)?.delete(name),
      });
    });
    services.forEach((s) => s.start());
    const instance = { name, app, services };
    instances.push(instance);
    return instance;
  }

  async function stop(instance: Instance): Promise<void> {
    instances.splice(instances.indexOf(instance), 1);
    await Promise.all(instance.services.map((s) => s.stop()));
    await instance.app.close();
  }

  const owned = () => instances.map((i) => i.services.filter((s) => s.isOwner).length);
  const spreadEvenly = (share: number[]) => () => {
    const counts = owned().sort((a, b) => a - b);
    return JSON.stringify(counts) === JSON.stringify([...share].sort((a, b) => a - b));
  };

  afterAll(async () => {
    for (const instance of [...instances]) await stop(instance);
  });

  it('spreads the group over the instances, keeps it still, and moves only what joins and leaves make necessary', async () => {
    for (const name of ['a', 'b', 'c', 'd']) await start(name);
    await waitUntil(spreadEvenly([3, 3, 3, 3]), 30_000, 'three mutexes on each of four instances');
    // Still: nothing moves while the same instances contend.
    const settled = acquisitions;
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    expect(acquisitions).toBe(settled);
    expect(owned()).toEqual([3, 3, 3, 3]);
    // The member rows are rows, not mutexes: the owners' list shows the group only.
    const rows = await instances[0].app.get(MutexOwnerRepository).getOwners();
    expect(rows.map((r) => r.mutex).every((m) => m.startsWith('shard-'))).toBe(true);

    // One leaves (stop releases its three): the other three take them, four each.
    await stop(instances[3]);
    await waitUntil(spreadEvenly([4, 4, 4]), 30_000, 'four mutexes on each of three instances');
    expect(acquisitions - settled).toBe(3);

    // One joins: it gets its share, and only that moves (three releases, three acquisitions).
    const before = acquisitions;
    await start('e');
    await waitUntil(spreadEvenly([3, 3, 3, 3]), 30_000, 'three mutexes on each of four instances again');
    expect(acquisitions - before).toBe(3);
    expect(overlaps).toEqual([]);
  });

  it("a mutex name in the member rows' namespace is refused", () => {
    const factory = instances[0].app.get(MutexContendServiceFactory);
    expect(() =>
      factory.createMutexContendService({
        mutex: 'holdfast:member:abc',
        contenderId: 'x',
        onAcquired: () => undefined,
        onReleased: () => undefined,
      }),
    ).toThrow(InvalidMutexNameError);
  });
});
