/**
 * Simba's discovery apart from its orchestration (as `@nestjs/schedule`): the explorer finds the
 * decorated methods and contender providers and hands them on; the orchestrator, a provider of
 * its own that a test can replace, creates and runs the contend services.
 */
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { describeEachDatabase } from '@holdfast/testing';
import {
  AbstractMutexContender,
  LeaderOnly,
  MutexContendRegistry,
  MutexContenderProvider,
  OnMutexAcquired,
  OnMutexReleased,
  SimbaModule,
  type MutexContender,
} from '../src';
import { SimbaOrchestrator } from '../src/explorer/simba.orchestrator';
import { freshMutex } from './simba-test.support';

jest.setTimeout(60_000);

describeEachDatabase('SimbaExplorer and SimbaOrchestrator', (ctx) => {
  it('the explorer hands every contender it found to the orchestrator, which alone creates and starts services', async () => {
    const [led, guarded, provided] = [freshMutex('found'), freshMutex('guarded'), freshMutex('provided')];
    const handed: { decorated: MutexContender[]; provided: MutexContender[] }[] = [];

    @Injectable()
    class Jobs {
      @OnMutexAcquired(led) up(): void {}
      @OnMutexReleased(led) down(): void {}
      @LeaderOnly(guarded) nightly(): void {}
    }

    @MutexContenderProvider()
    @Injectable()
    class Contender extends AbstractMutexContender {
      constructor() {
        super(provided);
      }
      override onAcquired(): void {}
    }

    const moduleRef = await Test.createTestingModule({
      imports: [
        SimbaModule.forRoot({ dataSource: ctx.dataSource, tablePrefix: ctx.prefix, schema: 'create' }),
      ],
      providers: [Jobs, Contender],
    })
      .overrideProvider(SimbaOrchestrator)
      .useValue({
        addContenders: (decorated: MutexContender[], providers: MutexContender[]) =>
          handed.push({ decorated, provided: providers }),
      })
      .compile();
    const app = moduleRef.createNestApplication();
    await app.init();
    try {
      expect(handed).toHaveLength(1);
      expect(handed[0].decorated.map((c) => c.mutex)).toEqual([led, guarded]);
      expect(handed[0].provided).toEqual([app.get(Contender)]);
      // The replaced orchestrator created nothing: the explorer does not contend by itself.
      expect(app.get(MutexContendRegistry).all()).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
