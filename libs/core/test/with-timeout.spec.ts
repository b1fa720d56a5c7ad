import { withTimeout } from '@holdfast/core/kit';

class Late extends Error {}

describe('withTimeout', () => {
  afterEach(() => jest.useRealTimers());

  it('resolves with the work, rejects with its error, and leaves no timer behind', async () => {
    jest.useFakeTimers();
    await expect(withTimeout(Promise.resolve(7), 1_000, () => 'late')).resolves.toBe(7);
    await expect(withTimeout(Promise.reject(new Error('boom')), 1_000, () => 'late')).rejects.toThrow('boom');
    expect(jest.getTimerCount()).toBe(0);
  });

  it('starts a function now and turns its synchronous throw into a rejection', async () => {
    let started = false;
    const wait = withTimeout(
      () => {
        started = true;
        return 1;
      },
      1_000,
      () => 0,
    );
    expect(started).toBe(true);
    await expect(wait).resolves.toBe(1);
    await expect(
      withTimeout(
        () => {
          throw new Error('sync');
        },
        1_000,
        () => 0,
      ),
    ).rejects.toThrow('sync');
  });

  it("settles with onTimeout's value, or rejects with what it throws, once the time is up", async () => {
    jest.useFakeTimers();
    const never = new Promise<number>(() => undefined);
    const value = withTimeout(never, 50, () => 'timed out' as const);
    const thrown = withTimeout(never, 50, () => {
      throw new Late('late');
    });
    jest.advanceTimersByTime(49);
    let settled = false;
    void value.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    jest.advanceTimersByTime(1);
    await expect(value).resolves.toBe('timed out');
    await expect(thrown).rejects.toBeInstanceOf(Late);
  });

  it('ignores the work once timed out (a later rejection is not unhandled)', async () => {
    jest.useFakeTimers();
    let fail!: (error: Error) => void;
    const work = new Promise<number>((_, reject) => (fail = reject));
    const wait = withTimeout(work, 10, () => -1);
    jest.advanceTimersByTime(10);
    await expect(wait).resolves.toBe(-1);
    fail(new Error('after the timeout'));
    await Promise.resolve();
  });

  it('rejects with the reason of an aborted signal, before or during the wait', async () => {
    const before = new AbortController();
    before.abort(new Error('already'));
    await expect(withTimeout(Promise.resolve(1), 1_000, () => 0, { signal: before.signal })).rejects.toThrow(
      'already',
    );
    const during = new AbortController();
    const wait = withTimeout(new Promise(() => undefined), 60_000, () => 0, { signal: during.signal });
    during.abort(new Error('shutdown'));
    await expect(wait).rejects.toThrow('shutdown');
  });
});
