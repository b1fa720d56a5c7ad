import { InvalidTablePrefixError, tableName, validateTablePrefix } from '@holdfast/core/kit';

describe('table prefix validation', () => {
  it.each(['BAD-PREFIX', '.leadingdot', 'pre fix', 'x;DROP TABLE y;--', '"quoted"', 'préfix', 'a..b', '.'])(
    'rejects %p with an error quoting the value',
    (value) => {
      expect(() => validateTablePrefix(value)).toThrow(InvalidTablePrefixError);
      expect(() => validateTablePrefix(value)).toThrow(JSON.stringify(value));
    },
  );

  it.each(['', 'My_App_1_', 'SCHEMA.MYAPP_', 'a.b.c_', 'trailing.dot.'])('accepts %p', (value) => {
    expect(validateTablePrefix(value)).toBe(value);
  });

  it.each([null, 42, {}, undefined])('rejects the non-string %p', (value) => {
    expect(() => validateTablePrefix(value)).toThrow(InvalidTablePrefixError);
  });

  it('builds prefixed table names', () => {
    expect(tableName('SCHEMA.MYAPP_', 'FAILOVER_STORE')).toBe('SCHEMA.MYAPP_FAILOVER_STORE');
    expect(tableName(undefined, 'FAILOVER_STORE')).toBe('FAILOVER_STORE');
    expect(() => tableName('x;--', 'T')).toThrow(InvalidTablePrefixError);
  });
});
