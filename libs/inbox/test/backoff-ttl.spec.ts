import { nextRetryDelay } from '../src/internal';
import { defaultTtlToIso, parseIsoTtl } from '../src/acceptor/ttl';
import { errorText } from '../src/delivery/inbox-delivery.service';

describe('backoff', () => {
  const policy = { maxRetries: 5, initialDelay: 1000, multiplier: 2, maxDelay: 10_000, jitter: 0 };

  it('grows by the multiplier, caps at maxDelay, and parks when RETRIES reaches maxRetries', () => {
    // maxRetries counts failed attempts (camunda-bpm-correlate: exhausted when RETRIES >= maxRetries).
    expect([0, 1, 2, 3].map((r) => nextRetryDelay(policy, r))).toEqual([1000, 2000, 4000, 8000]);
    expect(nextRetryDelay({ ...policy, maxRetries: 6 }, 4)).toBe(10_000);
    expect(nextRetryDelay(policy, 4)).toBeUndefined();
    expect(nextRetryDelay({ ...policy, maxRetries: 0 }, 0)).toBeUndefined();
  });

  it('takes at most the jitter share off the delay', () => {
    const jittered = { ...policy, jitter: 0.25 };
    expect(nextRetryDelay(jittered, 1, () => 0)).toBe(2000);
    expect(nextRetryDelay(jittered, 1, () => 0.999999)).toBe(1500);
    expect(nextRetryDelay(jittered, 1, () => 0.5)).toBe(1750);
  });
});

describe('ISO-8601 TTL', () => {
  it('parses valid positive durations to milliseconds', () => {
    expect(parseIsoTtl('PT10M')).toEqual({ iso: 'PT10M', ms: 600_000 });
    expect(parseIsoTtl('P1DT2H')).toEqual({ iso: 'P1DT2H', ms: 93_600_000 });
    expect(parseIsoTtl('PT0.5S')).toEqual({ iso: 'PT0.5S', ms: 500 });
  });

  it('refuses negative, zero, empty and non-ISO values', () => {
    for (const bad of ['PT-10M', '-PT1M', 'PT0S', 'P', '10m', '', 'PT10X', 600_000, null]) {
      expect(parseIsoTtl(bad)).toBeUndefined();
    }
  });

  it('turns a Holdfast duration into ISO-8601 for defaultTtl', () => {
    expect(defaultTtlToIso('PT1H')).toEqual({ iso: 'PT1H', ms: 3_600_000 });
    expect(defaultTtlToIso('90s')).toEqual({ iso: 'PT90S', ms: 90_000 });
    expect(() => defaultTtlToIso(0)).toThrow();
    expect(() => defaultTtlToIso('PT-1H')).toThrow();
  });
});

describe('stored error text', () => {
  it('keeps message and stack whole (ERROR is unbounded text)', () => {
    const error = new Error('x'.repeat(10_000));
    const text = errorText(error);
    expect(text.startsWith('Error: xxx')).toBe(true);
    expect(text).toContain('x'.repeat(10_000));
    const short = errorText(new TypeError('bad thing'));
    expect(short).toContain('TypeError: bad thing');
    expect(short).toContain('backoff-ttl.spec.ts');
    expect(errorText('plain string')).toBe('plain string');
  });
});
