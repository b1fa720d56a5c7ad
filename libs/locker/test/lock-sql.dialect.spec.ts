import { sqlDialect, type Dialect } from '@holdfast/core/kit';
import { LockQueryResolver } from '@holdfast/locker/internal';

/** The SQL of the lock's idle bound, as the row lock sends it. */
const timeouts = (d: Dialect, idleMillis: number) =>
  new LockQueryResolver(sqlDialect(d), 'P_').holdTimeouts(idleMillis).map((s) => s.sql);

describe("the row lock's idle bound per dialect", () => {
  it('bounds an idle transaction on PostgreSQL (ms, transaction-local) and MySQL/MariaDB (s, session)', () => {
    expect(timeouts('postgres', 1500)).toEqual([
      "SELECT set_config('idle_in_transaction_session_timeout', '1500', true) AS t",
    ]);
    expect(timeouts('postgres', 0.2)).toEqual([
      "SELECT set_config('idle_in_transaction_session_timeout', '1', true) AS t",
    ]);
    expect(timeouts('mariadb', 1500)).toEqual([
      'SET SESSION idle_transaction_timeout = 2',
      'SET SESSION wait_timeout = 2',
    ]);
    expect(timeouts('mysql', 1500)).toEqual(['SET SESSION wait_timeout = 2']);
    expect(timeouts('mysql', 1000)).toEqual(['SET SESSION wait_timeout = 1']);
    expect(timeouts('mysql', 0)).toEqual(['SET SESSION wait_timeout = 1']);
    for (const d of ['sqlite', 'mssql', 'oracle'] as const) expect(timeouts(d, 1500)).toEqual([]);
  });
});
