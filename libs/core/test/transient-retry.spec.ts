import {
  isDuplicateKeyError,
  isSyntaxError,
  isTransientConflictError,
  withTransientRetry,
} from '@holdfast/core';

const deadlock = () => Object.assign(new Error('Deadlock found when trying to get lock'), { errno: 1213 });

describe('withTransientRetry', () => {
  it('retries deadlocks and serialization failures, then succeeds', async () => {
    let calls = 0;
    const result = await withTransientRetry(async () => {
      if (++calls < 3) throw deadlock();
      return 'done';
    });
    expect(result).toBe('done');
    expect(calls).toBe(3);
  });

  it('gives up after maxAttempts tries in all', async () => {
    let calls = 0;
    await expect(
      withTransientRetry(async () => {
        calls++;
        throw { driverError: { code: '40P01' } };
      }, 3),
    ).rejects.toEqual({ driverError: { code: '40P01' } });
    expect(calls).toBe(3);
  });

  it('does not retry other errors', async () => {
    let calls = 0;
    await expect(
      withTransientRetry(async () => {
        calls++;
        throw Object.assign(new Error('duplicate'), { code: '23505' });
      }),
    ).rejects.toThrow('duplicate');
    expect(calls).toBe(1);
  });

  it('classifies driver errors, wrapped by TypeORM or not', () => {
    expect(isTransientConflictError({ driverError: { code: 'SQLITE_BUSY' } })).toBe(true);
    expect(isDuplicateKeyError({ driverError: { errno: 1062 } })).toBe(true);
    expect(isDuplicateKeyError({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' })).toBe(true);
    expect(isSyntaxError({ code: 'SQLITE_ERROR', message: 'near "x": syntax error' })).toBe(true);
    expect(isSyntaxError({ code: '42601' })).toBe(true);
    expect(isSyntaxError({ code: '23505' })).toBe(false);
  });
});
