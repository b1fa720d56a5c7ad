/**
 * MutexOwnerRepository (Simba's MutexOwnerRepository, reads): one owner, all owners, and a typed
 * not-found error, on Holdfast's table and on Simba's own DDL.
 */
import type { INestApplicationContext } from '@nestjs/common';
import { InvalidMutexNameError, MutexContendServiceFactory, MutexOwnerNotFoundError } from '../src';
import { MutexOwnerEntity, MutexOwnerRepository } from '../src/internal';
import {
  createSimbaApp,
  describeEachSimbaTable,
  freshMutex,
  RecordingContender,
  waitUntil,
} from './simba-test.support';

jest.setTimeout(60_000);

describeEachSimbaTable('MutexOwnerRepository', (ctx, layout) => {
  let app: INestApplicationContext;
  beforeAll(async () => {
    app = await createSimbaApp(ctx, { schema: layout === 'seed' ? 'check' : 'create' });
  });
  afterAll(() => app?.close());

  it('getOwner, findOwner and getOwners read the table; a mutex without a row is MutexOwnerNotFoundError', async () => {
    const owners = app.get(MutexOwnerRepository);
    const factory = app.get(MutexContendServiceFactory);
    const held = new RecordingContender(freshMutex('held'));
    const freed = new RecordingContender(freshMutex('freed'));
    const heldService = factory.createMutexContendService(held);
    const freedService = factory.createMutexContendService(freed);
    heldService.start();
    freedService.start();
    try {
      await waitUntil(
        () => heldService.isOwner && freedService.isOwner,
        20_000,
        'both contenders to acquire',
      );
      await freedService.stop();

      const owner = await owners.getOwner(held.mutex);
      expect(owner).toBeInstanceOf(MutexOwnerEntity);
      expect(owner.mutex).toBe(held.mutex);
      expect(owner.ownerId).toBe(held.contenderId);
      expect(owner.isOwner(held.contenderId)).toBe(true);
      expect(owner.fencingToken).toBe(heldService.fencingToken);
      expect(owner.isInTtl() || owner.isInTransition()).toBe(true);

      const free = await owners.getOwner(freed.mutex);
      expect(free.ownerId).toBe('');
      expect(free.hasOwner()).toBe(false);

      const all = await owners.getOwners();
      const mine = all.filter((o) => o.mutex === held.mutex || o.mutex === freed.mutex);
      expect(mine.map((o) => [o.mutex, o.ownerId])).toEqual(
        [
          [held.mutex, held.contenderId],
          [freed.mutex, ''],
        ].sort(([a], [b]) => (a < b ? -1 : 1)),
      );
      expect(all.map((o) => o.mutex)).toEqual([...all.map((o) => o.mutex)].sort());

      const missing = freshMutex('missing');
      await expect(owners.findOwner(missing)).resolves.toBeUndefined();
      const error = await owners.getOwner(missing).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MutexOwnerNotFoundError);
      expect(error).toMatchObject({ code: 'HOLDFAST_SIMBA_MUTEX_NOT_FOUND', mutex: missing });
      await expect(owners.getOwner('')).rejects.toThrow(InvalidMutexNameError);
    } finally {
      await heldService.stop();
    }
  });
});
