import { Controller, Get, Injectable, Module, Scope, SetMetadata } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService, MetadataScanner } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { discoverHandlers, discoverMethods, HoldfastError, NonStaticHandlerError } from '@holdfast/core/kit';

const KEY = 'holdfast:test:discovered';
const Handles = (what: string): MethodDecorator => SetMetadata(KEY, what);

@Injectable()
class SingletonHolder {
  calls: string[] = [];
  @Handles('singleton')
  onSingleton(arg: string): string {
    this.calls.push(arg);
    return `singleton:${arg}`;
  }
  notDecorated(): void {}
}

@Controller('discovered')
class DecoratedController {
  @Get()
  @Handles('controller')
  onController(): string {
    return 'controller';
  }
}

@Injectable({ scope: Scope.REQUEST })
class RequestScopedHolder {
  @Handles('request')
  onRequest(): void {}
}

@Injectable({ scope: Scope.TRANSIENT })
class TransientUndecorated {
  plain(): void {}
}

async function discoveryOf(providers: unknown[], controllers: unknown[] = []) {
  @Module({
    imports: [DiscoveryModule],
    providers: providers as never[],
    controllers: controllers as never[],
  })
  class Host {}
  const app = await Test.createTestingModule({ imports: [Host] }).compile();
  return { app, discovery: app.get(DiscoveryService), scanner: app.get(MetadataScanner) };
}

describe('discoverMethods / discoverHandlers: the one discovery rule', () => {
  const withoutInstance = [
    { provide: 'NULL_VALUE', useValue: null },
    { provide: 'NUMBER_VALUE', useValue: 42 },
    { provide: 'UNDEFINED_FACTORY', useFactory: () => undefined },
  ];
  /** The singleton twice: as itself and through an alias. */
  const aliased = [SingletonHolder, { provide: 'ALIAS', useExisting: SingletonHolder }];

  it('finds decorated methods on providers and controllers, each instance once, callable on it', async () => {
    const { app, discovery, scanner } = await discoveryOf(
      [...aliased, TransientUndecorated, ...withoutInstance],
      [DecoratedController],
    );
    const found = discoverHandlers<string>(discovery, scanner, KEY, '@Handles()');
    expect(found.map((h) => [h.metadata, h.declaredOn])).toEqual([
      ['singleton', 'SingletonHolder.onSingleton'],
      ['controller', 'DecoratedController.onController'],
    ]);
    const singleton = found[0];
    expect(singleton.instance).toBe(app.get(SingletonHolder));
    expect(singleton.method.call(singleton.instance, 'x')).toBe('singleton:x');
    expect(app.get(SingletonHolder).calls).toEqual(['x']);
    await app.close();
  });

  it('refuses a handler on a request-scoped provider with a typed error', async () => {
    const { app, discovery, scanner } = await discoveryOf([
      SingletonHolder,
      RequestScopedHolder,
      ...withoutInstance,
    ]);
    let error: unknown;
    try {
      discoverHandlers<string>(discovery, scanner, KEY, '@Handles()');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(NonStaticHandlerError);
    expect(error).toBeInstanceOf(HoldfastError);
    expect((error as HoldfastError).code).toBe('HOLDFAST_CORE_NON_STATIC_HANDLER');
    expect((error as Error).message).toContain('@Handles() on RequestScopedHolder.onRequest');
    await app.close();
  });

  it('collects metadata on classes of any scope for decorators that wrap the method itself', async () => {
    const { app, discovery, scanner } = await discoveryOf(
      [...aliased, RequestScopedHolder, ...withoutInstance],
      [DecoratedController],
    );
    const found = discoverMethods<string>(discovery, scanner, KEY);
    expect(found.map((m) => [m.metadata, m.declaredOn])).toEqual([
      ['singleton', 'SingletonHolder.onSingleton'],
      ['request', 'RequestScopedHolder.onRequest'],
      ['controller', 'DecoratedController.onController'],
    ]);
    expect(found[1].prototype).toBe(RequestScopedHolder.prototype);
    await app.close();
  });

  it('finds nothing when no method carries the key', async () => {
    const { app, discovery, scanner } = await discoveryOf([TransientUndecorated, ...withoutInstance]);
    expect(discoverHandlers(discovery, scanner, KEY, '@Handles()')).toEqual([]);
    expect(discoverMethods(discovery, scanner, KEY)).toEqual([]);
    await app.close();
  });
});
