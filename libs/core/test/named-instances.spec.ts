import { Inject, Injectable, Module, type DynamicModule } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { DEFAULT_INSTANCE_NAME, HoldfastError, NamedInstances } from '../src/kit';

class ThingError extends HoldfastError {
  constructor(message: string) {
    super(message, 'HOLDFAST_THING_CONFIGURATION');
  }
}

const OPTIONS = Symbol('THING_OPTIONS');
const NAME = Symbol('THING_NAME');
const STORE = Symbol('THING_STORE');
const things = new NamedInstances({
  lib: 'thing',
  optionsToken: OPTIONS,
  nameToken: NAME,
  invalidName: (message) => new ThingError(message),
});

@Injectable()
class ThingService {
  constructor(@Inject(NAME) readonly name: string) {}
}

/** A module the way a Holdfast lib builds one: options, one service, one extra aliased token. */
function thingModule(extras: { name?: string; isGlobal?: boolean }, label: string): DynamicModule {
  @Module({})
  class ThingModule {}
  const definition: DynamicModule = {
    module: ThingModule,
    providers: [
      { provide: OPTIONS, useValue: { label } },
      { provide: STORE, useValue: `store of ${label}` },
      ThingService,
    ],
  };
  return things.extras([ThingService], [{ token: STORE, named: (name) => things.key('store', name) }])(
    definition,
    { isGlobal: true, ...extras },
  );
}

describe('NamedInstances (core module kit)', () => {
  it('spells tokens: the class for the default instance, holdfast:<lib>:<name>:<Class> for a named one', () => {
    expect(things.token(ThingService)).toBe(ThingService);
    expect(things.token(ThingService, DEFAULT_INSTANCE_NAME)).toBe(ThingService);
    expect(things.token(ThingService, 'reports')).toBe('holdfast:thing:reports:ThingService');
    expect(things.optionsToken()).toBe(OPTIONS);
    expect(things.optionsToken('reports')).toBe('holdfast:thing:reports:options');
  });

  it('spells every other name of an instance (job names, aliased tokens) the same way: key(what, name)', () => {
    expect(things.key('cleanup')).toBe('holdfast:thing:cleanup');
    expect(things.key('cleanup', DEFAULT_INSTANCE_NAME)).toBe('holdfast:thing:cleanup');
    expect(things.key('cleanup', 'reports')).toBe('holdfast:thing:reports:cleanup');
    expect(things.key('store', 'reports')).toBe('holdfast:thing:reports:store');
  });

  it('a default and a named instance coexist, each injected by its own tokens', async () => {
    @Injectable()
    class Consumer {
      constructor(
        readonly byClass: ThingService,
        @Inject(things.token(ThingService, 'reports')) readonly named: ThingService,
        @Inject(OPTIONS) readonly options: unknown,
        @Inject(things.optionsToken('reports')) readonly namedOptions: unknown,
        @Inject(STORE) readonly store: string,
        @Inject('holdfast:thing:reports:store') readonly namedStore: string,
      ) {}
    }
    const app = await Test.createTestingModule({
      imports: [thingModule({}, 'a'), thingModule({ name: 'reports' }, 'b')],
      providers: [Consumer],
    }).compile();
    const c = app.get(Consumer);
    expect([c.byClass.name, c.named.name]).toEqual(['default', 'reports']);
    expect([c.options, c.namedOptions]).toEqual([{ label: 'a' }, { label: 'b' }]);
    expect([c.store, c.namedStore]).toEqual(['store of a', 'store of b']);
    await app.close();
  });

  it('is global unless isGlobal is false', () => {
    expect(thingModule({}, 'a').global).toBe(true);
    expect(thingModule({ isGlobal: false }, 'a').global).toBe(false);
  });

  it.each([[''], [' '], [' reports'], [42]])('refuses the name %p with the lib’s typed error', (name) => {
    expect(() => thingModule({ name: name as string }, 'a')).toThrow(ThingError);
    expect(() => thingModule({ name: name as string }, 'a')).toThrow(
      /non-empty string without surrounding spaces/,
    );
  });
});
