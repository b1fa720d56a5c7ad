import {
  isConnectionError,
  isNodeNotReadyError,
  isTransientConflictError,
  withTransientRetry,
} from '@holdfast/core/kit';

// What a MariaDB Galera node and a PostgreSQL HA cluster answer during their outages (#36), as
// mysql2 and pg report it (TypeORM wraps it in driverError).
const galeraNotReady = {
  driverError: {
    errno: 1047,
    code: 'ER_UNKNOWN_COM_ERROR',
    message: 'WSREP has not yet prepared node for application use',
  },
};
const certificationFailure = {
  driverError: {
    errno: 1213,
    code: 'ER_LOCK_DEADLOCK',
    message: 'Deadlock found when trying to get lock; try restarting transaction',
  },
};
const readOnly = {
  driverError: { code: '25006', message: 'cannot execute SELECT FOR UPDATE in a read-only transaction' },
};

describe('errors of HA database clusters', () => {
  it('a Galera node that is not ready, a server shutting down or read-only is an outage, not a statement error', () => {
    for (const error of [
      galeraNotReady,
      readOnly,
      { driverError: { errno: 1053, code: 'ER_SERVER_SHUTDOWN' } },
      { driverError: { errno: 1927, code: 'ER_CONNECTION_KILLED' } },
      { driverError: { errno: 1290, code: 'ER_OPTION_PREVENTS_STATEMENT' } },
      { driverError: { errno: 1792, code: 'ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION' } },
    ]) {
      expect({ error, notReady: isNodeNotReadyError(error), outage: isConnectionError(error) }).toEqual({
        error,
        notReady: true,
        outage: true,
      });
    }
    expect(isConnectionError(certificationFailure)).toBe(false);
    expect(isNodeNotReadyError({ driverError: { code: '23505' } })).toBe(false);
    expect(isTransientConflictError(galeraNotReady)).toBe(false);
  });

  it('certification failures at COMMIT are retried past the old budget of 5 tries', async () => {
    let calls = 0;
    const result = await withTransientRetry(async () => {
      if (++calls < 8) throw certificationFailure;
      return calls;
    });
    expect(result).toBe(8);
  });
});
