import 'reflect-metadata';
import { IsIn, IsInt, IsOptional, Min } from 'class-validator';
import {
  DatabaseOptionsDto,
  InvalidOptionsError,
  IsDurationOption,
  IsTablePrefix,
  NestedOptions,
  validateOptions,
} from '@holdfast/core/kit';

class Circular {
  self = this;
}

class SqlStore {
  @IsIn(['sql']) type!: string;
  @IsOptional() @IsTablePrefix() tablePrefix?: string;
  handle?: unknown;
}
class MemoryStore {
  @IsIn(['memory']) type!: string;
  @IsOptional() @IsInt() @Min(1) maxEntries?: number;
}
class Options {
  @IsOptional() @IsDurationOption() expiry?: unknown;
  @IsOptional()
  @NestedOptions((v) => (v.type === 'sql' ? SqlStore : v.type === 'memory' ? MemoryStore : undefined))
  store?: SqlStore | MemoryStore;
}

describe('validateOptions', () => {
  it('accepts good options and keeps references (no deep copy of circular objects)', () => {
    const handle = new Circular();
    const result = validateOptions(
      Options,
      { expiry: '10s', store: { type: 'sql', tablePrefix: 'APP_', handle } },
      'TestModule',
    );
    expect((result.store as SqlStore).handle).toBe(handle);
    expect(result.store).toBeInstanceOf(SqlStore);
  });

  it('names every bad option and its value', () => {
    const error = (() => {
      try {
        validateOptions(
          Options,
          { expiry: 'soon', store: { type: 'sql', tablePrefix: 'x;DROP TABLE y;--' } },
          'TestModule',
        );
      } catch (e) {
        return e as InvalidOptionsError;
      }
    })();
    expect(error).toBeInstanceOf(InvalidOptionsError);
    expect(error!.message).toContain(`option 'expiry' = "soon"`);
    expect(error!.message).toContain(`option 'store.tablePrefix' = "x;DROP TABLE y;--"`);
    expect(error!.problems).toHaveLength(2);
  });

  it('validates the chosen variant of a union', () => {
    expect(() =>
      validateOptions(Options, { store: { type: 'memory', maxEntries: 0 } }, 'TestModule'),
    ).toThrow(/option 'store.maxEntries' = 0/);
  });

  it('rejects non-object options', () => {
    expect(() => validateOptions(Options, 'nope', 'TestModule')).toThrow(
      /options must be an object, got "nope"/,
    );
  });
});

describe('DatabaseOptionsDto (the tables options every lib extends)', () => {
  class LibOptions extends DatabaseOptionsDto {
    @IsOptional() @IsInt() batch?: number;
  }
  const problems = (raw: object) => {
    try {
      validateOptions(LibOptions, raw, 'LibModule');
      return [];
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidOptionsError);
      return (error as InvalidOptionsError).message.split('\n').slice(1);
    }
  };

  it('accepts absent and valid values', () => {
    expect(problems({})).toEqual([]);
    expect(
      problems({ tablePrefix: 'app.hf_', dialect: 'mariadb', schema: 'check', dataSource: 'orders' }),
    ).toEqual([]);
  });

  it.each([
    [{ schema: 'drop' }, 'schema'],
    [{ schema: null }, 'schema'],
    [{ dialect: 'db2' }, 'dialect'],
    [{ tablePrefix: 'bad prefix;' }, 'tablePrefix'],
    [{ tablePrefix: null }, 'tablePrefix'],
    [{ dataSource: 42 }, 'dataSource'],
  ])('names the bad option in %j', (raw, option) => {
    const found = problems(raw);
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(`option '${option}'`);
  });

  it("keeps validating the lib's own fields", () => {
    expect(problems({ batch: 'ten', schema: 'x' })).toHaveLength(2);
  });
});
