import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { metrics } from '@opentelemetry/api';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import request from 'supertest';
import { declaredMetrics } from '@holdfast/core/kit';
import { FailoverHealthIndicator } from '@holdfast/failover';
import { InboxHealthIndicator } from '@holdfast/inbox';
import { LockerHealthIndicator } from '@holdfast/locker';
import { SimbaHealthIndicator } from '@holdfast/simba';
import { tempSqliteFile, waitUntil } from '@holdfast/testing';
import { DemoReportJob } from '../src/locker/demo-report.job';

/**
 * One metrics story: every instrument of the four libs is declared from a spec, the README's
 * table lists exactly those, and driving the demo once per lib makes them reach the
 * OpenTelemetry SDK's in-memory exporter under their names and units.
 */
describe('Holdfast metrics through the OpenTelemetry SDK (the demo app on SQLite)', () => {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({ readers: [reader] });
  let app: INestApplication;

  beforeAll(async () => {
    // Before any lib creates its instruments (they are created with the app).
    metrics.setGlobalMeterProvider(provider);
    process.env.DEMO_SQLITE_FILE = tempSqliteFile('metrics');
    process.env.DATABASE_URL = '';
    const { AppModule } = await import('../src/app.module');
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication();
    await app.init();
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await provider.shutdown();
    metrics.disable();
  });

  const exported = async () => {
    await reader.forceFlush();
    const found = new Map<
      string,
      { unit: string; points: number; outcomes: Set<unknown>; values: unknown[] }
    >();
    for (const resource of exporter.getMetrics())
      for (const scope of resource.scopeMetrics)
        for (const metric of scope.metrics)
          found.set(metric.descriptor.name, {
            unit: metric.descriptor.unit,
            points: metric.dataPoints.length,
            outcomes: new Set(metric.dataPoints.map((p) => p.attributes['holdfast.outcome'])),
            values: metric.dataPoints.map((p) => p.value),
          });
    return found;
  };

  it('drives each lib once and reads its instruments back, named and with units as declared', async () => {
    const http = () => request(app.getHttpServer());
    // failover: a fresh answer, then the stored one while the upstream is down.
    await http().get('/countries/fr').expect(200);
    await waitUntil(async () => (await http().get('/countries/fr')).body.upToDate === true);
    await http().post('/upstream/outage').send({ down: true });
    try {
      await waitUntil(async () => (await http().get('/countries/fr')).body.upToDate === false, {
        message: 'a stale answer',
      });
    } finally {
      await http().post('/upstream/outage').send({ down: false });
    }
    // inbox: one message accepted and delivered.
    await http().post('/inbox').send({ note: 'metrics' }).expect(202);
    await waitUntil(async () => (await http().get('/inbox')).body.handler.delivered >= 1, {
      timeout: 30_000,
      message: 'a delivery',
    });
    // simba and locker: leadership and the master role.
    await waitUntil(async () => (await http().get('/simba')).body.isOwner === true, { timeout: 30_000 });
    await waitUntil(async () => (await http().get('/locker')).body.role === 'master', { timeout: 30_000 });
    // @ScheduledLock: the demo's 10-second job runs once here (the only instance).
    await waitUntil(() => app.get(DemoReportJob).builds >= 1, {
      timeout: 30_000,
      message: 'a scheduled run',
    });

    const found = await exported();
    for (const name of [
      'holdfast.failover.calls',
      'holdfast.simba.acquired',
      'holdfast.simba.owner',
      'holdfast.simba.renewal.age',
      'holdfast.locker.acquired',
      'holdfast.locker.acquire.wait',
      'holdfast.locker.master',
      'holdfast.locker.keep_alive.age',
      'holdfast.inbox.accepted',
      'holdfast.inbox.delivered',
      'holdfast.inbox.batch.duration',
      'holdfast.inbox.depth',
      'holdfast.inbox.oldest_due.age',
      'holdfast.inbox.parked_messages',
      'holdfast.locker.scheduled.runs',
    ]) {
      expect({ name, points: (found.get(name)?.points ?? 0) > 0 }).toEqual({ name, points: true });
    }
    expect(found.get('holdfast.failover.calls')!.outcomes).toEqual(new Set(['success', 'recovered']));
    // The lag gauges, in seconds (not ms: the demo renews every 5 s and keeps alive every 1.5 s,
    // so a value in ms would be in the thousands), one per mutex owned and lock mastered here.
    for (const name of ['holdfast.simba.renewal.age', 'holdfast.locker.keep_alive.age']) {
      const values = found.get(name)!.values as number[];
      expect(values.length).toBeGreaterThan(0);
      for (const value of values) {
        expect(value).toBeGreaterThanOrEqual(0);
        expect(value).toBeLessThan(60);
      }
    }

    const declared = new Map(declaredMetrics().map((m) => [m.fullName, m]));
    for (const [name, { unit }] of found) {
      if (!name.startsWith('holdfast.')) continue;
      expect({ name, declared: declared.has(name), unit }).toEqual({
        name,
        declared: true,
        unit: declared.get(name)?.unit,
      });
      expect(name).toMatch(/^holdfast\.(core|failover|simba|locker|inbox)\.[a-z_]+(\.[a-z_]+)*$/);
    }
  }, 120_000);

  it('answers health in one shape in every lib: async, { [key]: { status, ...details } }', async () => {
    const indicators = [
      ['failover', app.get(FailoverHealthIndicator)],
      ['simba', app.get(SimbaHealthIndicator)],
      ['locker', app.get(LockerHealthIndicator)],
      ['inbox', app.get(InboxHealthIndicator)],
    ] as const;
    for (const [lib, indicator] of indicators) {
      const answer = indicator.isHealthy();
      expect(answer).toBeInstanceOf(Promise);
      const byDefault = await answer;
      expect(Object.keys(byDefault)).toEqual([lib]);
      expect(byDefault[lib as keyof typeof byDefault]).toMatchObject({ status: 'up' });
      const named = (await indicator.isHealthy('custom')) as Record<string, { status: string }>;
      expect(Object.keys(named)).toEqual(['custom']);
      expect(['up', 'down']).toContain(named.custom.status);
    }
  });

  it("lists exactly the declared instruments in the README's metrics table, with their units and attributes", () => {
    const readme = readFileSync(join(__dirname, '../../../README.md'), 'utf8');
    const rows = [...readme.matchAll(/^\| `(holdfast\.[a-z_.]+)` \| (\w+) \| `([^`]+)` \| ([^|]*) \|/gm)].map(
      ([, name, kind, unit, attributes]) => `${name} ${kind} ${unit} ${attributes.replace(/[`\s]/g, '')}`,
    );
    const declared = declaredMetrics()
      .filter((m) => ['failover', 'simba', 'locker', 'inbox'].includes(m.lib))
      .map((m) => `${m.fullName} ${m.kind} ${m.unit} ${(m.attributes ?? []).join(',')}`);
    expect(rows.sort()).toEqual(declared.sort());
  });

  it('declares durations in seconds and namespaced attributes only, as OpenTelemetry asks', () => {
    const declared = declaredMetrics().filter((m) =>
      ['failover', 'simba', 'locker', 'inbox'].includes(m.lib),
    );
    for (const m of declared) {
      expect({ name: m.fullName, unit: m.unit }).not.toEqual({ name: m.fullName, unit: 'ms' });
      for (const attribute of m.attributes ?? []) {
        expect({ name: m.fullName, attribute }).toEqual({
          name: m.fullName,
          attribute: expect.stringMatching(/^(holdfast\.[a-z_]+(\.[a-z_]+)*|db\.response\.status_code)$/),
        });
      }
    }
    const units = new Map(declared.map((m) => [m.fullName, m.unit]));
    for (const name of [
      'holdfast.inbox.batch.duration',
      'holdfast.inbox.oldest_due.age',
      'holdfast.locker.acquire.wait',
    ]) {
      expect({ name, unit: units.get(name) }).toEqual({ name, unit: 's' });
    }
  });
});
