import { DIALECTS, sqlDialect } from '@holdfast/core/kit';
import { MutexQueryResolver } from '../src/internal';

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

  it.each(DIALECTS.map((d) => [d]))(
    '%s: one statement acquires and renews many mutexes, every value bound',
    (name) => {
      const dialect = sqlDialect(name);
      const q = new MutexQueryResolver(dialect, '');
      const takes = [
        { mutex: 'a', contenderId: 'me' },
        { mutex: 'b', contenderId: 'you' },
      ];
      const renewals = [{ mutex: 'c', contenderId: 'me' }];
      const many = q.acquireMany(takes, renewals, 2_000, 1_000);
      expect(count(many.sql, name)).toBe(many.params.length);
      expect(many.params).toEqual(['a', 'me', 'b', 'you', 'c', 'me', 2_000, 3_000, 'a', 'b', 'c', 'c', 'me']);
      expect(many.sql).toContain('version = version + 1');
      expect(many.sql).toContain(`transition_at < ${dialect.nowMillis}`);
      expect(many.sql).not.toMatch(/'me'|'you'/);
      // One contender id for all: no CASE per mutex.
      const single = q.acquireMany(
        takes.map((t) => ({ ...t, contenderId: 'me' })),
        [],
        2_000,
        1_000,
      );
      expect(single.sql).not.toContain('CASE mutex');
      expect(count(single.sql, name)).toBe(single.params.length);
      const select = q.selectMany(['a', 'b', 'c']);
      expect(count(select.sql, name)).toBe(3);
      expect(select.sql).toContain(dialect.nowMillis);
    },
  );

  it('the fencing token is the database time, at least the previous token + 1', () => {
    expect(new MutexQueryResolver(sqlDialect('postgres'), '').acquire('m', 'me', 1, 1).sql).toContain(
      'acquired_at = GREATEST(CAST(FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) AS BIGINT), acquired_at + 1)',
    );
    expect(new MutexQueryResolver(sqlDialect('sqlite'), '').acquire('m', 'me', 1, 1).sql).toContain(
      "acquired_at = MAX(CAST(unixepoch('subsec') * 1000 AS INTEGER), acquired_at + 1)",
    );
    // A release keeps acquired_at: the next owner's token is above it.
    expect(new MutexQueryResolver(sqlDialect('mariadb'), '').release('m', 'me').sql).not.toContain(
      'acquired_at',
    );
  });
});
