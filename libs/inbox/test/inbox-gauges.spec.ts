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
import {
  InboxModule,
  InjectMessageAcceptor,
  InjectMessageManagement,
  MessageAcceptor,
  MessageManagement,
  type InboxModuleOptions,
  inboxTable,
} from '../src';

const MAX_RETRIES = 2;

/** Both inboxes as an application injects them (`app.get(MessageAcceptor)` may find either). */
@Injectable()
class BothInboxes {
  constructor(
    readonly acceptor: MessageAcceptor,
    readonly management: MessageManagement,
    @InjectMessageAcceptor('audit') readonly auditAcceptor: MessageAcceptor,
    @InjectMessageManagement('audit') readonly auditManagement: MessageManagement,
  ) {}
}

/**
 * The inbox gauges an on-call engineer alerts on (depth, oldest due age, parked), per inbox,
 * read back through the OpenTelemetry SDK from two inboxes of one application.
 */
describeEachDatabase(
  'inbox gauges through the OpenTelemetry SDK',
  (ctx) => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    const provider = new MeterProvider({ readers: [reader] });
    beforeAll(() => metrics.setGlobalMeterProvider(provider));
    afterAll(async () => {
      await provider.shutdown();
      metrics.disable();
    });

    const options = (tablePrefix: string): InboxModuleOptions => ({
      dataSource: ctx.dataSource,
      tablePrefix,
      schema: 'create',
      deliver: false,
      cleanupInterval: '1h',
      retry: { maxRetries: MAX_RETRIES },
    });

    /** The last value of each inbox gauge, by metric name and inbox. */
    async function gauges(): Promise<Map<string, number>> {
      exporter.reset();
      await reader.forceFlush();
      const values = new Map<string, number>();
      for (const resource of exporter.getMetrics())
        for (const scope of resource.scopeMetrics)
          for (const metric of scope.metrics)
            for (const point of metric.dataPoints)
              if (point.attributes['holdfast.inbox.name'] !== undefined)
                values.set(
                  `${metric.descriptor.name} ${String(point.attributes['holdfast.inbox.name'])}`,
                  point.value as number,
                );
      return values;
    }

    it('reports depth, the oldest due age and the parked count of each inbox under its name', async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          InboxModule.forRoot(options(ctx.prefix)),
          InboxModule.forRoot({ ...options(ctx.prefix + 'audit_'), name: 'audit' }),
        ],
        providers: [BothInboxes],
      }).compile();
      const app = await moduleRef.init();
      try {
        const { acceptor, management, auditAcceptor, auditManagement } = app.get(BothInboxes);
        const audit = { acceptor: auditAcceptor, management: auditManagement };
        const ids = ['g-1', 'g-2', 'g-3'];
        for (const id of ids) await acceptor.accept({ id, type: { name: 'gauge' }, payload: {} });
        await management.setRetries('g-3', MAX_RETRIES);
        await audit.acceptor.accept({ id: 'a-1', type: { name: 'gauge' }, payload: {} });
        await audit.management.setRetries('a-1', MAX_RETRIES);

        const counts = await management.count();
        const [oldest] = await management.list({ status: 'due', limit: 1 });
        const readFrom = Date.now();
        const values = await gauges();
        const readTo = Date.now();
        expect(values.get('holdfast.inbox.depth default')).toBe(counts.due + counts.retrying);
        expect(values.get('holdfast.inbox.depth default')).toBe(ids.length - 1);
        expect(values.get('holdfast.inbox.parked_messages default')).toBe(1);
        const age = values.get('holdfast.inbox.oldest_due.age default')!;
        expect(age).toBeGreaterThanOrEqual(0);
        // The age is measured on the inbox clock since the oldest due message was inserted, in
        // seconds (the unit OpenTelemetry's conventions ask for); a second of slack for the
        // database clock against this process's.
        expect(oldest.id).toBe('g-1');
        const inserted = oldest.inserted.getTime();
        expect(age).toBeGreaterThanOrEqual((readFrom - inserted - 1000) / 1000);
        expect(age).toBeLessThanOrEqual((readTo - inserted + 1000) / 1000);
        expect(values.get('holdfast.inbox.depth audit')).toBe(0);
        expect(values.get('holdfast.inbox.parked_messages audit')).toBe(1);
        expect(values.get('holdfast.inbox.oldest_due.age audit')).toBe(0);

        await management.retryNow('g-3');
        const after = await gauges();
        expect(after.get('holdfast.inbox.parked_messages default')).toBe(0);
        expect(after.get('holdfast.inbox.depth default')).toBe(ids.length);
      } finally {
        await app.close();
      }
    });
  },
  { tables: [inboxTable(), 'audit_' + inboxTable()] },
);
