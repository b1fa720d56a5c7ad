import { SchedulerRegistry } from '@nestjs/schedule';
import { HoldfastTimers } from '@holdfast/core/kit';
import { waitUntil } from '@holdfast/testing';

describe('HoldfastTimers', () => {
  it('registers a timer under its name, replaces one of the same name, and forgets it once fired', async () => {
    const registry = new SchedulerRegistry();
    const timers = new HoldfastTimers(registry);
    const fired: string[] = [];
    timers.set('holdfast:test:a', 10_000, () => fired.push('first'));
    timers.set('holdfast:test:a', 5, () => fired.push('second'));
    expect(registry.getTimeouts()).toEqual(['holdfast:test:a']);
    await waitUntil(() => fired.length === 1);
    expect(fired).toEqual(['second']);
    expect(registry.getTimeouts()).toEqual([]);
    expect(timers.has('holdfast:test:a')).toBe(false);
  });

  it('clears one or all, in the registry too', () => {
    const registry = new SchedulerRegistry();
    const timers = new HoldfastTimers(registry);
    const never = () => {
      throw new Error('must not fire');
    };
    timers.set('holdfast:test:a', 60_000, never);
    timers.set('holdfast:test:b', 60_000, never);
    timers.clear('holdfast:test:a');
    expect(registry.getTimeouts()).toEqual(['holdfast:test:b']);
    timers.clearAll();
    expect(registry.getTimeouts()).toEqual([]);
  });

  it('sleeps as a registered timer and rejects with the reason when aborted', async () => {
    const registry = new SchedulerRegistry();
    const timers = new HoldfastTimers(registry);
    await timers.sleep('holdfast:test:sleep', 5);
    const controller = new AbortController();
    const sleeping = timers.sleep('holdfast:test:sleep', 60_000, controller.signal);
    expect(registry.getTimeouts()).toEqual(['holdfast:test:sleep']);
    controller.abort(new Error('stopped'));
    await expect(sleeping).rejects.toThrow('stopped');
    expect(registry.getTimeouts()).toEqual([]);
  });

  it('keeps the same bookkeeping without a registry, and survives ScheduleModule clearing first', async () => {
    const timers = new HoldfastTimers();
    let fired = false;
    timers.set('holdfast:test:a', 5, () => (fired = true));
    expect(timers.has('holdfast:test:a')).toBe(true);
    await waitUntil(() => fired);

    const registry = new SchedulerRegistry();
    const registered = new HoldfastTimers(registry);
    registered.set('holdfast:test:b', 60_000, () => undefined);
    registry.deleteTimeout('holdfast:test:b'); // what ScheduleModule does at app.close()
    expect(() => registered.clearAll()).not.toThrow();
  });

  it('runs a 0 ms timer at the next turn of the event loop, unregistered, and clears or replaces it', async () => {
    const registry = new SchedulerRegistry();
    const timers = new HoldfastTimers(registry);
    const fired: string[] = [];
    timers.set('holdfast:test:now', 0, () => fired.push('now'));
    expect(timers.has('holdfast:test:now')).toBe(true);
    expect(registry.getTimeouts()).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(fired).toEqual(['now']);
    expect(timers.has('holdfast:test:now')).toBe(false);

    timers.set('holdfast:test:now', 0, () => fired.push('cleared'));
    timers.clear('holdfast:test:now');
    timers.set('holdfast:test:later', 60_000, () => fired.push('replaced'));
    timers.set('holdfast:test:later', 0, () => fired.push('soon'));
    expect(registry.getTimeouts()).toEqual([]);
    timers.set('holdfast:test:all', 0, () => fired.push('all'));
    timers.clearAll();
    timers.set('holdfast:test:last', -5, () => fired.push('last'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(fired).toEqual(['now', 'last']);
  });

  it("holds the event loop with a 0 ms timer: an unref()'d immediate would wait for the next timer or I/O", () => {
    const scheduled = jest.spyOn(global, 'setImmediate');
    try {
      const timers = new HoldfastTimers();
      timers.set('holdfast:test:now', 0, () => undefined);
      const immediate = scheduled.mock.results[0].value as NodeJS.Immediate;
      expect(immediate.hasRef()).toBe(true);
      timers.clear('holdfast:test:now');
    } finally {
      scheduled.mockRestore();
    }
  });
});
