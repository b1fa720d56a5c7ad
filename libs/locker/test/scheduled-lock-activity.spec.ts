import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { metrics } from '@opentelemetry/api';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { describeEachDatabase } from '@holdfast/testing';
import { LOCKER_STATUS_TOKENS, ScheduledLock, ScheduledLockModule, lockTable } from '../src';

/** A job whose lock outlives its run (lockAtLeastFor), so a second tick right after is skipped. */
@Injectable()
class Digest {
  runs = 0;
  @ScheduledLock({ name: 'digest', lockAtMostFor: '2h', lockAtLeastFor: '1h' })
  async send(): Promise<void> {
    this.runs++;
  }
}

describeEachDatabase(
  '@ScheduledLock runs and skips: the executor and holdfast.locker.scheduled.*',
  (ctx) => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    const provider = new MeterProvider({ readers: [reader] });
    beforeAll(() => metrics.setGlobalMeterProvider(provider));
    afterAll(async () => {
      await provider.shutdown();
      metrics.disable();
    });

    /** Each data point of a scheduled counter: `<metric> <job> <outcome or reason>` → value. */
    async function counted(): Promise<Map<string, number>> {
      exporter.reset();
      await reader.forceFlush();
      const values = new Map<string, number>();
      for (const resource of exporter.getMetrics())
        for (const scope of resource.scopeMetrics)
          for (const metric of scope.metrics)
            if (metric.descriptor.name.startsWith('holdfast.locker.scheduled.'))
              for (const p of metric.dataPoints) {
                const kind = String(p.attributes['holdfast.outcome'] ?? p.attributes['holdfast.reason']);
                values.set(
                  `${metric.descriptor.name} ${String(p.attributes['holdfast.job.name'])} ${kind}`,
                  p.value as number,
                );
              }
      return values;
    }

    it('counts a run, then a tick skipped because the lock is still held, and keeps the last of each', async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          ScheduledLockModule.forRoot({
            dataSource: ctx.dataSource,
            tablePrefix: ctx.prefix,
            schema: 'create',
          }),
        ],
        providers: [Digest],
      }).compile();
      const app = await moduleRef.init();
      try {
        const digest = app.get(Digest);
        await digest.send();
        await digest.send();
        expect(digest.runs).toBe(1);
        const [job] = app.get(LOCKER_STATUS_TOKENS.scheduledExecutor).jobs();
        expect(job).toMatchObject({
          name: 'digest',
          where: 'Digest.send',
          runs: 1,
          skips: 1,
          lastRunError: null,
          lastSkipReason: 'locked',
        });
        expect(job.lastRunAt).toEqual(expect.any(String));
        expect(job.lastSkipAt).toEqual(expect.any(String));
        const values = await counted();
        expect(values.get('holdfast.locker.scheduled.runs digest success')).toBe(1);
        expect(values.get('holdfast.locker.scheduled.skips digest locked')).toBe(1);
      } finally {
        await app.close();
      }
    });
  },
  { tables: [lockTable()] },
);
