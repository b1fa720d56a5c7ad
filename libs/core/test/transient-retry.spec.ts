import { metrics, type MeterProvider } from '@opentelemetry/api';
import {
  isDuplicateKeyError,
  isSyntaxError,
  sqlRetryCounter,
  withTransientRetry,
  type TransientRetry,
} from '@holdfast/core/kit';
import { isAlreadyExistsError, isTransientConflictError } from '../src/database/sql-errors';

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

describe('withTransientRetry reporting', () => {
  it('reports each retry with the failed try, the code and the operation; a throwing hook changes nothing', async () => {
    const seen: TransientRetry[] = [];
    let calls = 0;
    const result = await withTransientRetry(
      async () => {
        if (++calls < 3) throw { driverError: { code: '40001' } };
        return calls;
      },
      {
        operation: 'claim',
        onRetry: (r) => {
          seen.push(r);
          throw new Error('broken hook');
        },
      },
    );
    expect(result).toBe(3);
    expect(seen.map((r) => [r.attempt, r.code, r.operation])).toEqual([
      [1, '40001', 'claim'],
      [2, '40001', 'claim'],
    ]);
  });

  it('counts retries in holdfast.<lib>.sql.retries through the global meter provider', async () => {
    const added: Array<{ name: string; value: number; attributes: unknown }> = [];
    const meter = {
      createCounter: (name: string) => ({
        add: (value: number, attributes: unknown) => added.push({ name, value, attributes }),
      }),
    };
    metrics.setGlobalMeterProvider({ getMeter: () => meter } as unknown as MeterProvider);
    try {
      let calls = 0;
      await withTransientRetry(
        async () => {
          if (++calls < 2) throw deadlock();
        },
        { operation: 'accept', onRetry: sqlRetryCounter('inbox') },
      );
    } finally {
      metrics.disable();
    }
    expect(added).toEqual([
      {
        name: 'holdfast.inbox.sql.retries',
        value: 1,
        attributes: { 'db.response.status_code': '1213', 'holdfast.operation': 'accept' },
      },
    ]);
  });

  it('classifies lock wait timeouts (MySQL/MariaDB 1205) as transient', () => {
    expect(isTransientConflictError({ driverError: { errno: 1205, code: 'ER_LOCK_WAIT_TIMEOUT' } })).toBe(
      true,
    );
    expect(isAlreadyExistsError({ driverError: { errno: 1061 } })).toBe(true);
    expect(isAlreadyExistsError({ driverError: { code: '42P07' } })).toBe(true);
    expect(
      isAlreadyExistsError({ driverError: { code: '23505', constraint: 'pg_class_relname_nsp_index' } }),
    ).toBe(true);
    expect(isAlreadyExistsError({ driverError: { code: '23505', constraint: 'my_pk' } })).toBe(false);
  });
});
