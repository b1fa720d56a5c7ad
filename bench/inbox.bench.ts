/**
 * npm run bench -- inbox [--single N] [--bulk N] [--workers 2] [--latency N] [--rate 500] [--rounds N]
 *                        [--databases postgres,mariadb,sqlite] [--profile DIR] [--no-analyze]
 *                        [--batches 100,500]
 *
 * @holdfast/inbox against graphile-worker 0.17 and pg-boss 10 on the same PostgreSQL, in the same
 * run (ratios against graphile-worker), then Holdfast alone on MariaDB and SQLite:
 *  1. accept ×1 at concurrency 10: `MessageAcceptor.accept` / `addJob` / `boss.send`;
 *  2. bulk: `acceptAll` / `addJobs` / `boss.insert` (the whole list in one call each);
 *  3. delivery: 2 worker processes each, no-op handler, until everything accepted above is
 *     processed: the inbox's own loop / graphile-worker's runner / a tight pg-boss
 *     `fetch(100)` + `complete(ids)` loop;
 *  4. latency: `--latency` messages accepted one by one at `--rate` per second while the 2
 *     workers sit idle; accept-to-handled time (the accepting call's start to the handler's start,
 *     one machine, one wall clock) p50/p99. Beside them, what the feed did: the accepting call's
 *     own p50 and the rate the accepts completed at; below 95% of `--rate` the machine could not
 *     take the rate (the accepts queued for connections), and the bench says so.
 *  5. the delivery's CPU time per message: the worker processes' own (`process.cpuUsage`, from
 *     'go', start-up included) and PostgreSQL's (every server process, from /proc). Less noisy
 *     than the rates on a shared machine, and it says which side a change moved.
 * Holdfast runs once per `--batches` size on PostgreSQL (its batchSize, and completionBatchSize
 * the same: 100, the defaults, and 500, what graphile-worker's local queue below fetches at
 * once), with the first size elsewhere.
 * graphile-worker runs in its documented high-throughput setup: concurrentJobs 10 per process,
 * localQueue.size 500, completeJobBatchDelay 0 and failJobBatchDelay 0 (batched completion),
 * maxPoolSize 12, its LISTEN/NOTIFY on (the default), prepared statements (the default).
 * Each system gets its own schema or table, dropped afterwards.
 * `--rounds N` runs the PostgreSQL comparison N times, the systems taking turns, and ends with
 * each ratio's median over the rounds (every ratio taken within its own round): one round's
 * latency moves ±30% on a shared machine.
 */
import { GRAPHILE_SETTINGS } from './support/graphile';
import {
  analyzeBeforeDelivery,
  benchBoss,
  benchGraphile,
  benchInbox,
  profileWorkersTo,
  type Figures,
  type Sizes,
} from './support/inbox-bench-runs';
import { percentile } from './support/inbox-bench-runs';
import type { Db } from './support/inbox-bench-setup';

function arg(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
}

// ---- main -------------------------------------------------------------------------------------

type RowKind = 'rate' | 'cost' | 'info';

// 'rate': higher is better; 'cost': lower is better (a latency, CPU per message); 'info': no ratio (what the latency run's feed did).
const ROWS: [string, (f: Figures) => number, RowKind][] = [
  ['accept ×1, concurrency 10 (msg/s)', (f) => f.single, 'rate'],
  ['bulk accept (msg/s)', (f) => f.bulk, 'rate'],
  ['delivery, 2 processes, start-up included (msg/s)', (f) => f.delivery, 'rate'],
  ['delivery, from the first message handled (msg/s)', (f) => f.steady, 'rate'],
  ["delivery: 'go' to the first message handled (ms)", (f) => f.startup, 'cost'],
  ['latency p50 (ms)', (f) => f.p50, 'cost'],
  ['latency p99 (ms)', (f) => f.p99, 'cost'],
  ['latency run: the accepting call alone, p50 (ms)', (f) => f.acceptP50, 'info'],
  ['latency run: accepts completed (msg/s)', (f) => f.achieved, 'info'],
  ['delivery CPU per message, workers (µs)', (f) => f.workerCpu, 'cost'],
  ['delivery CPU per message, PostgreSQL (µs)', (f) => f.databaseCpu, 'cost'],
];

/** Above 1.00 is better: rates ours ÷ theirs, latencies and costs theirs ÷ ours. */
function ratio(kind: RowKind, f: Figures, baseline: Figures, pick: (f: Figures) => number): number {
  return kind === 'rate' ? pick(f) / pick(baseline) : pick(baseline) / pick(f);
}

/** Each ratio's median over the rounds (each round's ratio taken within that round), and its range. */
function medianRatios(rounds: [string, Figures][][]): void {
  const names = rounds[0].slice(1).map(([name]) => name);
  console.log(
    `\nPostgreSQL, ${rounds.length} rounds: each ratio ÷ graphile-worker of its own round, median (min–max)\n`,
  );
  console.log(`| measure | ${names.map((n) => `${n} ÷ gw`).join(' | ')} |`);
  console.log(`|---|${names.map(() => '---').join('|')}|`);
  for (const [label, pick, kind] of ROWS) {
    if (kind === 'info') continue;
    const cells = names.map((_, c) => {
      const r = rounds
        .map((columns) => ratio(kind, columns[c + 1][1], columns[0][1], pick))
        .sort((a, b) => a - b);
      return `${percentile(r, 50).toFixed(2)} (${r[0].toFixed(2)}–${r[r.length - 1].toFixed(2)})`;
    });
    console.log(`| ${label} | ${cells.join(' | ')} |`);
  }
}

function table(title: string, rateAsked: number, columns: [string, Figures][], baseline?: Figures): void {
  console.log(`\n${title}\n`);
  const head = ['measure', ...columns.map(([name]) => name)];
  if (baseline) head.push(...columns.slice(1).map(([name]) => `${name} ÷ gw`));
  console.log(`| ${head.join(' | ')} |`);
  console.log(`|${head.map(() => '---').join('|')}|`);
  for (const [label, pick, kind] of ROWS) {
    // Rates in whole messages per second, times and CPU to a tenth.
    const cells = columns.map(([, f]) => pick(f).toFixed(label.endsWith('(msg/s)') ? 0 : 1));
    if (baseline) {
      for (const [, f] of columns.slice(1))
        cells.push(kind === 'info' ? '–' : ratio(kind, f, baseline, pick).toFixed(2));
    }
    console.log(`| ${label} | ${cells.join(' | ')} |`);
  }
  // Accept-to-handled starts before the accepting call: when the calls could not keep the rate,
  // they queued for connections and the figure is mostly that queue, not delivery.
  for (const [name, f] of columns)
    if (f.achieved < 0.95 * rateAsked)
      console.log(
        `${name}: its accepts completed at ${f.achieved.toFixed(0)} msg/s of the ${rateAsked} asked (the accepting ` +
          `call alone: p50 ${f.acceptP50.toFixed(1)} ms): its latency measures a saturated machine; try a lower --rate`,
      );
}

export async function main(args: string[]): Promise<void> {
  const sizes: Sizes = {
    single: arg(args, 'single', 5_000),
    bulk: arg(args, 'bulk', 50_000),
    workers: arg(args, 'workers', 2),
    latency: arg(args, 'latency', 2_500),
    rate: arg(args, 'rate', 500),
  };
  const roundCount = arg(args, 'rounds', 1);
  analyzeBeforeDelivery(!args.includes('--no-analyze'));
  const p = args.indexOf('--profile');
  if (p >= 0) profileWorkersTo(args[p + 1]);
  const i = args.indexOf('--databases');
  const databases = (i >= 0 ? args[i + 1] : 'postgres,mariadb,sqlite').split(',') as Db[];
  console.log(
    `sizes: accept ×1 ${sizes.single}, bulk ${sizes.bulk}, delivery of all ${sizes.single + sizes.bulk + 200} ` +
      `by ${sizes.workers} processes, latency ${sizes.latency} messages at ${sizes.rate}/s`,
  );
  console.log(`graphile-worker settings (per process): ${JSON.stringify(GRAPHILE_SETTINGS)}`);
  console.log('pg-boss: fetch(batchSize 100) + complete(ids) loop, 50 ms sleep when empty');
  const notify = process.env.HOLDFAST_INBOX_BENCH_NOTIFY === 'false' ? 'off' : 'on (PostgreSQL)';
  const b = args.indexOf('--batches');
  const batches = (b >= 0 ? args[b + 1] : '100,500').split(',').map(Number);
  console.log(
    `Holdfast: batchSize ${batches.join(' and ')}, pollInterval 50ms, notify ${notify}, wakeOnAccept`,
  );
  console.log(
    !args.includes('--no-analyze')
      ? 'PostgreSQL tables ANALYZEd after the accepts, before delivery (--no-analyze: not)'
      : 'no ANALYZE before delivery',
  );
  if (databases.includes('postgres') && process.env.HOLDFAST_INBOX_BENCH_ALONE === '1') {
    // HOLDFAST_INBOX_BENCH_ALONE=1: Holdfast alone on PostgreSQL too (before/after comparisons).
    const columns: [string, Figures][] = [];
    for (const batch of batches)
      columns.push([`Holdfast ${batch}`, await benchInbox('postgres', sizes, batch)]);
    table('postgres: Holdfast alone', sizes.rate, columns);
  } else if (databases.includes('postgres')) {
    // Rounds interleave the systems (graphile-worker, Holdfast, graphile-worker, …) so that a
    // machine that slows down mid-run weighs on both; pg-boss, far behind, runs in round 1 only.
    const rounds: [string, Figures][][] = [];
    for (let round = 1; round <= roundCount; round++) {
      const gw = await benchGraphile(sizes);
      const hf: [string, Figures][] = [];
      for (const batch of batches) hf.push([`Holdfast ${batch}`, await benchInbox('postgres', sizes, batch)]);
      const columns: [string, Figures][] = [['graphile-worker', gw], ...hf];
      if (round === 1) columns.push(['pg-boss', await benchBoss(sizes)]);
      const of = roundCount > 1 ? `, round ${round} of ${roundCount}` : '';
      table(
        `PostgreSQL, same run${of} (ratios ÷ graphile-worker, > 1.00 is better)`,
        sizes.rate,
        columns,
        gw,
      );
      rounds.push(columns.slice(0, 1 + batches.length));
    }
    if (roundCount > 1) medianRatios(rounds);
  }
  for (const db of databases.filter((d) => d !== 'postgres')) {
    table(`${db}: Holdfast alone`, sizes.rate, [
      [`Holdfast ${batches[0]}`, await benchInbox(db, sizes, batches[0])],
    ]);
  }
}
