import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { metrics } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { parser } from '@prometheus-io/lezer-promql';
import { load } from 'js-yaml';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { ScheduledLock } from '@holdfast/locker';
import { tempSqliteFile, waitUntil } from '@holdfast/testing';
import { DemoReportJob } from '../src/locker/demo-report.job';

/** A port of this suite's own (the exporter serves it on 127.0.0.1 for the scrape below). */
const PORT = 25590;
const ROOT = join(__dirname, '../../..');

/** Two @ScheduledLock jobs for the series the alerts match on: a run that throws, a tick with no lock table. */
@Injectable()
class AlertedJobs {
  @ScheduledLock({ name: 'alerts-failing', lockAtMostFor: '1m' })
  async failing(): Promise<void> {
    throw new Error('the report could not be built');
  }

  @ScheduledLock({ name: 'alerts-unreachable', lockAtMostFor: '1m' })
  async unreachable(): Promise<void> {}
}

/** What a PromQL expression reads: metrics, the labels it groups by, and its matchers. */
interface Query {
  expression: string;
  metrics: string[];
  grouping: string[];
  matchers: { metric: string; label: string; op: string; value: string }[];
  errors: number[];
}

function parseQuery(expression: string): Query {
  const query: Query = { expression, metrics: [], grouping: [], matchers: [], errors: [] };
  const text = (from: number, to: number) => expression.slice(from, to);
  let metric = '';
  parser.parse(expression).iterate({
    enter(node) {
      if (node.type.isError) query.errors.push(node.from);
      if (node.name === 'VectorSelector') {
        const identifier = node.node.getChild('Identifier');
        metric = identifier ? text(identifier.from, identifier.to) : '';
        if (metric) query.metrics.push(metric);
      }
      if (node.name === 'GroupingLabels') {
        for (const label of node.node.getChildren('LabelName'))
          query.grouping.push(text(label.from, label.to));
      }
      if (node.name === 'UnquotedLabelMatcher') {
        const [label, op, value] = ['LabelName', 'MatchOp', 'StringLiteral'].map((name) => {
          const child = node.node.getChild(name);
          return child ? text(child.from, child.to) : '';
        });
        query.matchers.push({ metric, label, op, value: JSON.parse(value) as string });
      }
    },
  });
  return query;
}

/** The example alert expressions of the README and of docs/operations.md: each table cell that queries holdfast_*. */
function documentedAlerts(): { file: string; expression: string }[] {
  return ['README.md', 'docs/operations.md'].flatMap((file) =>
    [
      ...readFileSync(join(ROOT, file), 'utf8').matchAll(
        /^\|[^|\n]*\| `([^`\n]*holdfast_[^`\n]*)`[^|\n]*\|/gm,
      ),
    ].map(([, expression]) => ({ file, expression })),
  );
}

/** The example rules file a user loads into Prometheus as it is. */
const RULES_FILE = 'docs/alerts/holdfast.rules.yml';

interface RulesFile {
  groups: { name: string; rules: { alert?: string; record?: string; expr: string }[] }[];
}

/** The alerting rules of RULES_FILE: name and expression. */
function ruleFileAlerts(): { file: string; alert: string; expression: string }[] {
  const rules = load(readFileSync(join(ROOT, RULES_FILE), 'utf8')) as RulesFile;
  return rules.groups.flatMap((group) =>
    group.rules.map((rule) => ({ file: RULES_FILE, alert: rule.alert ?? '', expression: rule.expr })),
  );
}

/** Every alert expression a user copies: the documentation's tables and the rules file. */
function allAlerts(): { file: string; expression: string }[] {
  return [...documentedAlerts(), ...ruleFileAlerts()];
}

/** The samples of a Prometheus text exposition: metric name → the label sets of its samples. */
function samples(exposition: string): Map<string, Record<string, string>[]> {
  const found = new Map<string, Record<string, string>[]>();
  for (const line of exposition.split('\n')) {
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+\S+/.exec(line);
    if (!sample) continue;
    const labels: Record<string, string> = {};
    for (const [, name, value] of (sample[2] ?? '').matchAll(
      /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g,
    )) {
      labels[name] = value;
    }
    found.set(sample[1], [...(found.get(sample[1]) ?? []), labels]);
  }
  return found;
}

/**
 * The alert rules a user copies from the documentation, checked against the real Prometheus
 * exporter of OpenTelemetry (`@opentelemetry/exporter-prometheus`) serving the demo app: every
 * metric an expression selects is served, with every label it groups or matches by, and every
 * label value an equality matcher asks for (the failing and unreachable @ScheduledLock series
 * are made to happen: a job that throws, and a lock row the database refuses to insert).
 */
describe('the documented Prometheus alerts against @opentelemetry/exporter-prometheus (the demo app on SQLite)', () => {
  let exporter: PrometheusExporter;
  let provider: MeterProvider;
  let app: INestApplication;

  beforeAll(async () => {
    await new Promise<void>((resolve, reject) => {
      exporter = new PrometheusExporter({ host: '127.0.0.1', port: PORT }, (error) =>
        error ? reject(error) : resolve(),
      );
    });
    provider = new MeterProvider({ readers: [exporter] });
    // Before any lib creates its instruments (they are created with the app).
    metrics.setGlobalMeterProvider(provider);
    process.env.DEMO_SQLITE_FILE = tempSqliteFile('prometheus-alerts');
    process.env.DATABASE_URL = '';
    const { AppModule } = await import('../src/app.module');
    const moduleRef = await Test.createTestingModule({
      imports: [AppModule],
      providers: [AlertedJobs],
    }).compile();
    app = moduleRef.createNestApplication();
    await app.init();
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await provider?.shutdown();
    metrics.disable();
  });

  it('finds the alert rules in the documentation, each a valid PromQL expression', () => {
    const alerts = documentedAlerts();
    expect(alerts.length).toBeGreaterThanOrEqual(6);
    for (const { file, expression } of alerts) {
      expect({ file, expression, errors: parseQuery(expression).errors }).toEqual({
        file,
        expression,
        errors: [],
      });
    }
  });

  it('has a rules file with an alert for each failure an on-call engineer is paged for', () => {
    const alerts = ruleFileAlerts();
    expect(alerts.map((a) => a.alert).sort()).toEqual(
      [
        'HoldfastNoLeader',
        'HoldfastMasterLost',
        'HoldfastMasterDemoted',
        'HoldfastMutexRenewalLag',
        'HoldfastLockKeepAliveLag',
        'HoldfastInboxBacklog',
        'HoldfastInboxStuck',
        'HoldfastInboxParkedGrowing',
      ].sort(),
    );
    for (const { alert, expression } of alerts) {
      expect({ alert, errors: parseQuery(expression).errors }).toEqual({ alert, errors: [] });
    }
  });

  it('queries only metrics, labels and label values the exporter serves', async () => {
    const http = () => request(app.getHttpServer());
    // The inbox: one message accepted and delivered; its gauges are read at every scrape.
    await http().post('/inbox').send({ note: 'alerts' }).expect(202);
    await waitUntil(async () => (await http().get('/inbox')).body.handler.delivered >= 1, {
      timeout: 30_000,
      message: 'a delivery',
    });
    // @ScheduledLock: a run that succeeds, one that throws, a tick whose lock row cannot be written.
    await app.get(DemoReportJob).build();
    const jobs = app.get(AlertedJobs);
    await expect(jobs.failing()).rejects.toThrow('the report could not be built');
    await app
      .get(DataSource)
      .query(
        `CREATE TRIGGER alerts_unreachable BEFORE INSERT ON HOLDFAST_LOCK WHEN NEW.ID = 'alerts-unreachable' ` +
          `BEGIN SELECT RAISE(ABORT, 'lock table unreachable'); END`,
      );
    await jobs.unreachable();
    // Simba and the locker: this instance leads, and its master role is taken from it once (the
    // lease row handed to another holder: its next keep-alive is refused) and won back.
    await waitUntil(async () => (await http().get('/simba')).body.isOwner === true, { timeout: 30_000 });
    await waitUntil(async () => (await http().get('/locker')).body.role === 'master', { timeout: 30_000 });
    await app
      .get(DataSource)
      .query(`UPDATE HOLDFAST_LOCK SET BROKER_NAME = 'another-instance' WHERE ID = 'demo-master'`);
    await waitUntil(async () => (await http().get('/locker')).body.role === 'standby', {
      timeout: 30_000,
      message: 'the master demoted',
    });
    await waitUntil(async () => (await http().get('/locker')).body.role === 'master', {
      timeout: 60_000,
      message: 'the master role won back',
    });

    const response = await fetch(`http://127.0.0.1:${PORT}/metrics`);
    expect(response.status).toBe(200);
    const served = samples(await response.text());

    const problems: string[] = [];
    for (const { file, expression } of allAlerts()) {
      const query = parseQuery(expression);
      for (const metric of query.metrics) {
        const series = served.get(metric);
        if (!series) {
          const near = [...served.keys()].filter((name) => name.startsWith('holdfast_')).join(', ');
          problems.push(`${file}: ${metric} is not served (served: ${near})`);
          continue;
        }
        for (const label of query.grouping) {
          if (!series.some((labels) => label in labels)) {
            problems.push(
              `${file}: ${metric} has no label ${label} (labels: ${Object.keys(series[0]).join(', ')})`,
            );
          }
        }
        for (const m of query.matchers.filter((matcher) => matcher.metric === metric)) {
          const match = series.some((labels) =>
            m.op === '=' ? labels[m.label] === m.value : m.label in labels,
          );
          if (!match) problems.push(`${file}: no ${metric} sample has ${m.label}${m.op}"${m.value}"`);
        }
      }
    }
    expect(problems).toEqual([]);
  }, 120_000);
});
