import { waitUntil } from '@holdfast/testing';

describe('waitUntil', () => {
  it('resolves with the first truthy value, counting a throwing predicate as "not yet"', async () => {
    let calls = 0;
    const value = await waitUntil(
      () => {
        calls++;
        if (calls === 1) throw new Error('not ready');
        return calls >= 3 ? { calls } : undefined;
      },
      { interval: 1 },
    );
    expect(value).toEqual({ calls: 3 });
  });

  it('accepts async predicates', async () => {
    let n = 0;
    await expect(waitUntil(async () => ++n === 2, { interval: 1 })).resolves.toBe(true);
  });

  it('fails after the timeout, naming what was awaited and the last thing seen', async () => {
    await expect(
      waitUntil(
        () => {
          throw new Error('connection refused');
        },
        { timeout: 30, interval: 5, message: 'the server to accept connections' },
      ),
    ).rejects.toThrow(
      'waitUntil: the server to accept connections did not happen within 30 ms (last seen: Error: connection refused)',
    );
    await expect(waitUntil(() => 0, { timeout: 10, interval: 5 })).rejects.toThrow(
      'waitUntil: the condition did not happen within 10 ms (last seen: 0)',
    );
  });
});
