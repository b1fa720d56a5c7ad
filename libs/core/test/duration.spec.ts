import { InvalidDurationError, formatIsoDuration, parseDuration, parseIsoDuration } from '@holdfast/core/kit';

describe('parseDuration', () => {
  it.each([
    [0, 0],
    [1500, 1500],
    ['500ms', 500],
    ['10s', 10_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['2d', 172_800_000],
    ['250', 250],
    // ISO-8601, the syntax of the inbox's TTLs, everywhere a Duration is taken.
    ['PT10M', 600_000],
    ['pt1.5s', 1500],
    ['PT0,5S', 500],
    ['P1DT2H', 93_600_000],
    ['P1W', 604_800_000],
    ['P1M', 2_592_000_000],
    ['P1Y', 31_536_000_000],
    ['PT1H30M15S', 5_415_000],
  ])('%p is %p ms', (input, expected) => {
    expect(parseDuration(input)).toBe(expected);
  });

  it.each([
    -1,
    NaN,
    Infinity,
    '',
    'soon',
    '-5s',
    '10 parsecs',
    'P',
    'PT',
    'P1H',
    'PT1D',
    'P-1D',
    'P1DT',
    'PT10M5',
  ])('rejects %p, naming the option', (input) => {
    expect(() => parseDuration(input as never, 'expiry')).toThrow(InvalidDurationError);
    expect(() => parseDuration(input as never, 'expiry')).toThrow(/'expiry'/);
  });
});

describe('parseIsoDuration and formatIsoDuration', () => {
  it('reads what it writes, in seconds as TTL_DURATION stores it', () => {
    for (const ms of [1, 500, 90_000, 3_600_000]) {
      expect(formatIsoDuration(ms)).toMatch(/^PT[\d.]+S$/);
      expect(parseIsoDuration(formatIsoDuration(ms))).toBe(ms);
    }
    expect(formatIsoDuration(3_600_000)).toBe('PT3600S');
  });

  it('answers undefined for text that is not an ISO-8601 duration', () => {
    for (const text of ['1h', 'P', 'PT', 'P1H', 'PT1Y', 'P1D2H', 'XP1D'])
      expect(parseIsoDuration(text)).toBeUndefined();
  });
});
