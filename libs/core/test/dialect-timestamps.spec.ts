import { DIALECTS, sqlDialect, type SqlBinder } from '@holdfast/core/kit';

/** Collects bound values, numbering placeholders the dialect's way. */
function binder(d: (typeof DIALECTS)[number]): SqlBinder & { params: unknown[] } {
  const params: unknown[] = [];
  return {
    params,
    bind: (value) => sqlDialect(d).placeholder(params.push(value)),
  };
}

const FAR = Date.parse('4999-12-03T10:15:30Z');

describe('dialect timestamp SQL', () => {
  it('writes an absolute time as a bound value of the column type', () => {
    const at = (d: (typeof DIALECTS)[number]) => {
      const b = binder(d);
      return [sqlDialect(d).timestampSql().at(b, 1_000), b.params];
    };
    expect(at('postgres')).toEqual(['CAST($1 AS TIMESTAMPTZ)', ['1970-01-01T00:00:01.000Z']]);
    expect(at('mysql')).toEqual(['CAST(? AS DATETIME(3))', ['1970-01-01 00:00:01.000']]);
    expect(at('sqlite')).toEqual(['?', ['1970-01-01T00:00:01.000Z']]);
    expect(at('mssql')).toEqual(['CAST(@0 AS DATETIME2(3))', ['1970-01-01 00:00:01.000']]);
    const b = binder('mariadb');
    expect(sqlDialect('mariadb').timestampSql('timestamp').at(b, 1_000)).toBe('FROM_UNIXTIME(? / 1000)');
    expect(b.params).toEqual([1_000]);
  });

  it('adds a bound delta in ms to the database clock', () => {
    const b = binder('sqlite');
    expect(sqlDialect('sqlite').timestampSql().nowPlus(b, 1_500)).toBe(
      "strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?)",
    );
    expect(b.params).toEqual(['+1.500 seconds']);
    const m = binder('mysql');
    expect(sqlDialect('mysql').timestampSql().nowPlus(m, 1_500)).toBe(
      '(UTC_TIMESTAMP(3) + INTERVAL ? MICROSECOND)',
    );
    expect(m.params).toEqual([1_500_000]);
  });

  it('writes a constant time as a literal, a DATETIME on MySQL whatever the storage', () => {
    expect(sqlDialect('postgres').timestampSql().literal(FAR)).toBe(
      "CAST('4999-12-03T10:15:30.000Z' AS TIMESTAMPTZ)",
    );
    expect(sqlDialect('sqlite').timestampSql().literal(FAR)).toBe("'4999-12-03T10:15:30.000Z'");
    expect(sqlDialect('oracle').timestampSql().literal(FAR)).toBe("TIMESTAMP '4999-12-03 10:15:30.000'");
    for (const storage of ['datetime', 'timestamp'] as const) {
      expect(sqlDialect('mysql').timestampSql(storage).literal(FAR)).toBe(
        "CAST('4999-12-03 10:15:30.000' AS DATETIME(3))",
      );
    }
  });

  it('turns epoch ms into a timestamp and reads one back as epoch ms', () => {
    expect(sqlDialect('postgres').timestampSql().fromMillis('C')).toBe('to_timestamp(C / 1000.0)');
    expect(sqlDialect('sqlite').timestampSql().fromMillis('C')).toBe(
      "strftime('%Y-%m-%dT%H:%M:%fZ', C / 1000.0, 'unixepoch')",
    );
    expect(sqlDialect('sqlite').timestampSql().read('C')).toBe('C');
    for (const d of DIALECTS) {
      const t = sqlDialect(d).timestampSql();
      expect(t.toMillis(new Date(1_234))).toBe(1_234);
      expect(t.toMillis('1234')).toBe(1_234);
      expect(t.toMillis('-1234')).toBe(-1_234);
      expect(t.toMillis('1234.9')).toBe(1_234);
      expect(t.toMillis('')).toBeNaN();
      expect(t.toMillis('-')).toBeNaN();
      expect(t.toMillis('1970-01-01 00:00:01.234')).toBe(1_234);
    }
  });

  it('says only a MySQL/MariaDB TIMESTAMP cannot reach year 4999', () => {
    for (const d of DIALECTS) expect(sqlDialect(d).timestampSql().maxMillis).toBeGreaterThan(FAR);
    for (const d of ['mysql', 'mariadb'] as const) {
      expect(new Date(sqlDialect(d).timestampSql('timestamp').maxMillis).toISOString()).toBe(
        '2038-01-19T03:14:07.999Z',
      );
    }
  });
});
