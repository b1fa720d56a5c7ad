import { InvalidDurationError, parseDuration } from '@holdfast/core/kit';

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
  ])('%p is %p ms', (input, expected) => {
    expect(parseDuration(input)).toBe(expected);
  });

  it.each([-1, NaN, Infinity, '', 'soon', '-5s', '10 parsecs'])('rejects %p, naming the option', (input) => {
    expect(() => parseDuration(input as never, 'expiry')).toThrow(InvalidDurationError);
    expect(() => parseDuration(input as never, 'expiry')).toThrow(/'expiry'/);
  });
});
