import { DIALECTS, sqlDialect } from '@holdfast/core';
import { MutexQueryResolver } from '../src';

const PLACEHOLDER: Record<string, RegExp> = { postgres: /\$\d+/g, mssql: /@\d+/g, oracle: /:\d+/g };
const count = (sql: string, dialect: string) => (sql.match(PLACEHOLDER[dialect] ?? /\?/g) ?? []).length;

describe('MutexQueryResolver', () => {
  it.each(DIALECTS.map((d) => [d]))(
    '%s: every statement binds all values and uses the database clock',
    (name) => {
      const dialect = sqlDialect(name);
      const q = new MutexQueryResolver(dialect, 'app.hf_');
      expect(q.table).toBe('app.hf_simba_mutex');
      const acquire = q.acquire('m', 'me', 1_000, 500);
      expect(acquire.params).toEqual([1_000, 1_500, 'me', 'm', 'me']);
      expect(count(acquire.sql, name)).toBe(5);
      expect(acquire.sql).toContain(dialect.nowMillis);
      expect(acquire.sql).toContain('version = version + 1');
      expect(acquire.sql).not.toContain("'me'");
      const release = q.release('m', 'me');
      expect(count(release.sql, name)).toBe(2);
      expect(release.sql).toContain(`transition_at = ${dialect.nowMillis} - 1`);
      expect(count(q.select('m').sql, name)).toBe(1);
      expect(count(q.ensureRows(['m', 'n']).sql, name)).toBe(2);
    },
  );

  // Changed by #10: rows are created with a value for every column (Simba's DDL has no defaults).
  it('creates missing rows, free and with every column, without overwriting an existing one', () => {
    expect(new MutexQueryResolver(sqlDialect('postgres'), '').ensureRows(['m']).sql).toBe(
      "INSERT INTO simba_mutex (mutex, acquired_at, ttl_at, transition_at, owner_id, version) VALUES ($1, 0, 0, 0, '', 0) ON CONFLICT (mutex) DO NOTHING",
    );
    expect(new MutexQueryResolver(sqlDialect('mariadb'), '').ensureRows(['m', 'n']).sql).toBe(
      "INSERT INTO simba_mutex (mutex, acquired_at, ttl_at, transition_at, owner_id, version) VALUES (?, 0, 0, 0, '', 0), (?, 0, 0, 0, '', 0) ON DUPLICATE KEY UPDATE mutex = mutex",
    );
  });

  it('bounds statements server-side where the database can', () => {
    const pg = new MutexQueryResolver(sqlDialect('postgres'), '');
    expect(pg.transactionTimeout(500)).toEqual({
      sql: "SELECT set_config('statement_timeout', $1, true) AS a, set_config('idle_in_transaction_session_timeout', $2, true) AS b",
      params: ['500ms', '500ms'],
    });
    const maria = new MutexQueryResolver(sqlDialect('mariadb'), '');
    expect(maria.timed(maria.select('m'), 1_500).sql).toMatch(
      /^SET STATEMENT max_statement_time = 1\.500 FOR SELECT /,
    );
    const sqlite = new MutexQueryResolver(sqlDialect('sqlite'), '');
    expect(sqlite.timed(sqlite.select('m'), 1_500).sql).toMatch(/^SELECT /);
    expect(sqlite.busyTimeout()?.sql).toBe('PRAGMA busy_timeout');
  });
});
