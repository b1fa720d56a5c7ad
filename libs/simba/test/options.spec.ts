import { InvalidOptionsError } from '@holdfast/core/kit';
import { Test } from '@nestjs/testing';
import {
  AbstractMutexContender,
  InvalidContenderIdError,
  InvalidMutexNameError,
  LeaderOnly,
  OnMutexAcquired,
  SimbaModule,
} from '../src';
import { resolveSimbaOptions } from '../src/internal';

describe('SimbaModule options', () => {
  it('applies the defaults: ttl 10s, transition 6s, statement timeout transition / 3', () => {
    expect(resolveSimbaOptions({})).toMatchObject({
      ttl: 10_000,
      transition: 6_000,
      initialDelay: 0,
      standbyPoll: 500,
      statementTimeout: 2_000,
      schema: 'check',
      tablePrefix: '',
    });
    expect(resolveSimbaOptions({ ttl: '2s', transition: 900 })).toMatchObject({
      ttl: 2_000,
      transition: 900,
      statementTimeout: 300,
    });
  });

  it.each([
    [{ ttl: 0 }, "option 'ttl' = 0"],
    [{ ttl: '-1s' }, 'option \'ttl\' = "-1s"'],
    [{ transition: 0 }, "option 'transition' = 0"],
    [{ transition: 'soon' }, 'option \'transition\' = "soon"'],
    [{ initialDelay: -5 }, "option 'initialDelay' = -5"],
    [{ enabled: 'no' }, 'option \'enabled\' = "no"'],
    [{ tablePrefix: 'x; DROP TABLE y' }, 'option \'tablePrefix\' = "x; DROP TABLE y"'],
    [{ schema: 'drop' }, 'option \'schema\' = "drop"'],
    [
      { transition: '3s', statementTimeout: '3s' },
      "option 'statementTimeout' = \"3s\": must be shorter than 'transition'",
    ],
  ])('rejects %j naming the option and value', (options, text) => {
    let error: unknown;
    try {
      resolveSimbaOptions(options as never);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidOptionsError);
    expect((error as Error).message).toContain(text);
  });

  it('stops bootstrap through forRoot and forRootAsync alike', async () => {
    await expect(
      Test.createTestingModule({ imports: [SimbaModule.forRoot({ transition: 0 })] }).compile(),
    ).rejects.toThrow("option 'transition' = 0");
    await expect(
      Test.createTestingModule({
        imports: [SimbaModule.forRootAsync({ useFactory: () => ({ ttl: -1 }) })],
      }).compile(),
    ).rejects.toThrow("option 'ttl' = -1");
  });

  it('rejects bad mutex names and contender ids with typed errors', () => {
    class C extends AbstractMutexContender {}
    expect(() => new C('')).toThrow(InvalidMutexNameError);
    expect(() => new C('x'.repeat(67))).toThrow(/at most 66 characters/);
    expect(() => new C('ok', 'y'.repeat(129))).toThrow(InvalidContenderIdError);
    expect(() => OnMutexAcquired('')).toThrow(InvalidMutexNameError);
    expect(() => LeaderOnly(42 as never)).toThrow(/Invalid mutex name 42/);
  });
});
