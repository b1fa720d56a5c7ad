/**
 * node bench/support/scale-chart.mjs <figures.json> <chart.svg>
 *
 * Draws the figures of `npm run bench -- scale` as one SVG: a Vega-Lite spec compiled to Vega and
 * rendered headless in Node (no browser, no canvas). One panel per cost, the work on the x axis
 * (table rows, messages waiting, mutexes per instance), one line per database. An ES module
 * because Vega ships as ES modules only; the bench runs it as a child process.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { argv } from 'node:process';
import { parse, View } from 'vega';
import { compile } from 'vega-lite';

const [input, output] = argv.slice(2);
const figures = JSON.parse(readFileSync(input, 'utf8'));

/** Long-form points: one per database, size and measure. */
const points = [];
const add = (panel, database, size, value, series = database) => {
  if (typeof value === 'number' && Number.isFinite(value))
    points.push({ panel, database, size, value, series });
};
for (const r of figures.failover ?? []) {
  add('Failover upserts/s by table rows', r.database, r.rows, r.upsertsPerSecond);
  add('Failover point reads/s by table rows', r.database, r.rows, r.readsPerSecond);
  add('Failover cleanup of all rows, ms', r.database, r.rows, r.cleanupMs);
  add('Failover worst re-store wait during cleanup, ms', r.database, r.rows, r.restoreMaxMs);
}
for (const r of figures.inbox ?? []) {
  add('Inbox accepts/s by messages waiting', r.db, r.waiting, r.acceptPerSecond);
  add('Inbox deliveries/s by messages waiting', r.db, r.waiting, r.deliverPerSecond);
}
for (const r of figures.simba ?? []) {
  add('Simba statements/s by mutexes per instance', r.db, r.mutexes, r.statementsPerSecond);
  add('Simba CPU % of one core (max of 2 processes)', r.db, r.mutexes, r.cpuPercent);
  add('Simba takeover after SIGKILL, ms', r.db, r.mutexes, r.takeoverMs);
}

/** In the order the panels were declared above, whichever databases have figures. */
const order = [
  'Failover upserts/s by table rows',
  'Failover point reads/s by table rows',
  'Failover cleanup of all rows, ms',
  'Failover worst re-store wait during cleanup, ms',
  'Inbox accepts/s by messages waiting',
  'Inbox deliveries/s by messages waiting',
  'Simba statements/s by mutexes per instance',
  'Simba CPU % of one core (max of 2 processes)',
  'Simba takeover after SIGKILL, ms',
];
const panels = order.filter((panel) => points.some((p) => p.panel === panel));
/** The command(s) that measured what is drawn (parts may come from separate runs). */
const commands =
  [...new Set(Object.values(figures.runs ?? {}).map((run) => run.command))].join('; ') ||
  figures.command ||
  'npm run bench -- scale';

const spec = {
  $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
  title: {
    text: 'Holdfast at scale: how each cost grows with the work',
    subtitle: `${commands} · ${figures.machine ?? ''} · ${figures.generatedAt ?? ''}`,
  },
  data: { values: points },
  columns: 3,
  concat: panels.map((panel) => ({
    title: panel,
    width: 260,
    height: 160,
    transform: [{ filter: { field: 'panel', equal: panel } }],
    mark: { type: 'line', point: true },
    encoding: {
      x: {
        field: 'size',
        type: 'ordinal',
        sort: 'ascending',
        title: null,
        axis: { labelExpr: "format(datum.value, '~s')", labelAngle: 0 },
      },
      y: {
        field: 'value',
        type: 'quantitative',
        title: null,
        axis: { labelExpr: "datum.value >= 1000 ? format(datum.value, '~s') : format(datum.value, '~r')" },
      },
      color: {
        field: 'database',
        type: 'nominal',
        scale: { domain: ['sqlite', 'postgres', 'mariadb'], range: ['#4c78a8', '#54a24b', '#e45756'] },
        title: 'database',
      },
      tooltip: [{ field: 'database' }, { field: 'size' }, { field: 'value', format: ',.1f' }],
    },
  })),
  resolve: { scale: { x: 'independent', y: 'independent' } },
  config: { font: 'Helvetica, Arial, sans-serif', background: 'white' },
};

const view = new View(parse(compile(spec).spec), { renderer: 'none' });
writeFileSync(output, await view.toSVG());
