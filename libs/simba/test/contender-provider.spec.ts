/**
 * `@MutexContenderProvider()`: a provider that implements MutexContender contends from bootstrap
 * on, as Simba's contender beans do, and releases before shutdown.
 */
import { Injectable, Scope, type INestApplicationContext, type Provider } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { NonStaticHandlerError } from '@holdfast/core/kit';
import { describeEachDatabase } from '@holdfast/testing';
import {
  AbstractMutexContender,
  InvalidMutexContenderError,
  MutexContendRegistry,
  MutexContenderProvider,
  SimbaModule,
  type MutexState,
  type SimbaModuleOptions,
  simbaTable,
} from '../src';
import { freshMutex, waitUntil } from './simba-test.support';

jest.setTimeout(60_000);

/** A contender provider class for `mutex` (a class per app, so each app has its own instance). */
function contenderProvider(mutex: string) {
  @MutexContenderProvider()
  @Injectable()
  class ReportsContender extends AbstractMutexContender {
    readonly events: string[] = [];
    constructor() {
      super(mutex);
    }
    override onAcquired(state: MutexState): void {
      this.events.push(`acquired:${state.fencingToken}`);
    }
    override onReleased(): void {
      this.events.push('released');
    }
  }
  return ReportsContender;
}

describeEachDatabase(
  'MutexContenderProvider',
  (ctx) => {
    const opened: INestApplicationContext[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((a) => a.close().catch(() => undefined)));
    });

    const app = async (providers: Provider[], options: SimbaModuleOptions = {}) => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          SimbaModule.forRoot({
            dataSource: ctx.dataSource,
            tablePrefix: ctx.prefix,
            schema: 'create',
            ttl: 1_000,
            transition: 600,
            ...options,
          }),
        ],
        providers,
      }).compile();
      opened.push(moduleRef);
      return moduleRef;
    };

    it('contends at bootstrap: one of two apps owns, the other takes over when the owner shuts down', async () => {
      const mutex = freshMutex('provider');
      const A = contenderProvider(mutex);
      const B = contenderProvider(mutex);
      const a = await app([A]);
      const b = await app([B]);
      await Promise.all([a.init(), b.init()]);
      const ca = a.get(A);
      const cb = b.get(B);
      await waitUntil(() => ca.events.length + cb.events.length > 0, 20_000, 'one contender to acquire');
      const [owner, ownerApp, other] = ca.events.length ? [ca, a, cb] : [cb, b, ca];
      expect(owner.events).toHaveLength(1);
      expect(other.events).toEqual([]);
      // The registry answers for the provider's mutex as for a decorated one.
      expect(ownerApp.get(MutexContendRegistry).isOwner(mutex)).toBe(true);
      expect(ownerApp.get(MutexContendRegistry).get(mutex)?.contender).toBe(owner);

      await ownerApp.close();
      // Released before shutdown: onReleased ran, and the other app takes over.
      expect(owner.events.at(-1)).toBe('released');
      await waitUntil(() => other.events.length > 0, 20_000, 'the other contender to take over');
      expect(other.events[0]).toMatch(/^acquired:/);
    });

    it('autoStart: false creates the contend service but does not start it', async () => {
      const mutex = freshMutex('provider-manual');
      const P = contenderProvider(mutex);
      const a = await app([P], { autoStart: false });
      await a.init();
      const service = a.get(MutexContendRegistry).get(mutex);
      expect(service?.contender).toBe(a.get(P));
      expect(service?.status).toBe('INITIAL');
    });

    it('a marked provider that is not a MutexContender stops startup with InvalidMutexContenderError', async () => {
      @MutexContenderProvider()
      @Injectable()
      class NotAContender {
        readonly mutex = 'x';
      }
      const a = await app([NotAContender]);
      const error = await a.init().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidMutexContenderError);
      expect((error as Error).message).toContain('NotAContender');
    });

    it('a request-scoped contender provider stops startup with NonStaticHandlerError', async () => {
      const mutex = freshMutex('provider-scoped');
      @MutexContenderProvider()
      @Injectable({ scope: Scope.REQUEST })
      class Scoped extends AbstractMutexContender {
        constructor() {
          super(mutex);
        }
      }
      const a = await app([Scoped]);
      const error = await a.init().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(NonStaticHandlerError);
      expect((error as Error).message).toContain('@MutexContenderProvider()');
    });
  },
  { tables: [simbaTable()] },
);
