/**
 * npm run bench -- scale [--db sqlite,postgres,mariadb] [--quick] [--only failover,inbox,simba]
 *                        [--sizes failover=10000,100000] [--sizes inbox=0,100000] [--sizes simba=10,100]
 *                        [--out docs/scale] [--mariadb-port 25464]
 *
 * The three scale benchmarks of issue #17 in one run, per database:
 *  - failover: store (upsert) and recover (point read) rates and the cleanup time at
 *    10,000 / 100,000 / 1,000,000 rows (bench/scale-failover.bench.ts);
 *  - inbox: accept and delivery rates with 0 / 100,000 / 1,000,000 messages waiting
 *    (bench/scale-inbox.bench.ts, 50,000 delivered);
 *  - simba: statements per second, CPU and takeover time at 10 / 100 / 1,000 / 5,000 mutexes per
 *    instance (bench/scale-simba.bench.ts).
 * It prints each table with its ratios, then writes the raw figures to `<out>.json` and draws them
 * with Vega-Lite into `<out>.svg` (bench/support/scale-chart.mjs; redraw from the JSON with
 * `node bench/support/scale-chart.mjs docs/scale.json docs/scale.svg`).
 *
 * `--quick` takes a tenth of the failover and inbox sizes, Simba up to 500 mutexes, and shorter
 * measurements, so the whole run takes minutes;
 * `--sizes <bench>=<list>` replaces one bench's sizes (repeat it for the others); `--only <parts>`
 * runs some parts and keeps the other parts' figures already in `<out>.json` (each part records
 * its own command and time).
 * The parts run one after another, never at the same time.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { printScaleFailover, scaleFailover, type FailoverScaleRow } from './scale-failover.bench';
import { printScaleInbox, runScaleInbox, type ScaleInboxRow } from './scale-inbox.bench';
import { printScaleSimba, scaleSimba, type SimbaScaleRow } from './scale-simba.bench';
import { benchDatabases, numberArg } from './support/bench-kit';

type Part = 'failover' | 'inbox' | 'simba';
const PARTS: readonly Part[] = ['failover', 'inbox', 'simba'];

const FULL: Record<Part, number[]> = {
  failover: [10_000, 100_000, 1_000_000],
  inbox: [0, 100_000, 1_000_000],
  simba: [10, 100, 1_000, 5_000],
};
const QUICK: Record<Part, number[]> = {
  failover: [1_000, 10_000, 100_000],
  inbox: [0, 10_000, 100_000],
  simba: [10, 100, 500],
};

export interface ScaleFigures {
  generatedAt: string;
  machine: string;
  /** The command that made these figures (without --out). */
  command: string;
  args: string[];
  sizes: Partial<Record<Part, number[]>>;
  /** When and how each part was measured. */
  runs: Partial<Record<Part, { at: string; command: string }>>;
  failover?: FailoverScaleRow[];
  inbox?: ScaleInboxRow[];
  simba?: SimbaScaleRow[];
}

/** `--sizes failover=1000,10000` (repeatable) over the defaults. */
export function parseSizes(args: string[], quick: boolean): Record<Part, number[]> {
  const sizes = { ...(quick ? QUICK : FULL) };
  args.forEach((arg, i) => {
    if (arg !== '--sizes') return;
    const [part, list] = (args[i + 1] ?? '').split('=');
    if (!PARTS.includes(part as Part) || !list) {
      throw new Error(`--sizes takes <${PARTS.join('|')}>=<n,n,…>, got '${args[i + 1]}'`);
    }
    const values = list.split(',').map((s) => Number(s.replace(/_/g, '')));
    if (values.some((v) => !Number.isInteger(v) || v < 0))
      throw new Error(`--sizes ${part}: not a list of sizes`);
    sizes[part as Part] = values;
  });
  return sizes;
}

function listArg(args: string[], name: string): string[] | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1].split(',').map((s) => s.trim()) : undefined;
}

export async function main(args: string[]): Promise<void> {
  const quick = args.includes('--quick');
  const sizes = parseSizes(args, quick);
  const only = (listArg(args, '--only') ?? PARTS) as Part[];
  const databases = benchDatabases(args);
  const out = resolve(args.includes('--out') ? args[args.indexOf('--out') + 1] : join('docs', 'scale'));
  const command = [
    'npm run bench -- scale',
    ...args.filter((a, i) => a !== '--out' && args[i - 1] !== '--out'),
  ].join(' ');
  const previous: Partial<ScaleFigures> =
    only.length < PARTS.length && existsSync(`${out}.json`)
      ? JSON.parse(readFileSync(`${out}.json`, 'utf8'))
      : {};
  const figures: ScaleFigures = {
    generatedAt: new Date().toISOString(),
    machine: `${cpus().length} × ${cpus()[0]?.model.trim() ?? 'cpu'}, Node ${process.version}`,
    command,
    args,
    sizes: { ...previous.sizes },
    runs: { ...previous.runs },
    ...(previous.failover && { failover: previous.failover }),
    ...(previous.inbox && { inbox: previous.inbox }),
    ...(previous.simba && { simba: previous.simba }),
  };
  const log = (text: string) => process.stderr.write(`[scale] ${new Date().toISOString()} ${text}\n`);

  if (only.includes('failover')) {
    log(`failover at ${sizes.failover.join(', ')} rows`);
    figures.sizes.failover = sizes.failover;
    figures.runs.failover = { at: new Date().toISOString(), command };
    figures.failover = await scaleFailover({ databases, sizes: sizes.failover, seconds: quick ? 1 : 2 });
    printScaleFailover(figures.failover);
  }
  if (only.includes('inbox')) {
    const deliver = quick ? 5_000 : 50_000;
    log(`inbox with ${sizes.inbox.join(', ')} waiting, ${deliver} delivered`);
    figures.sizes.inbox = sizes.inbox;
    figures.runs.inbox = { at: new Date().toISOString(), command };
    figures.inbox = await runScaleInbox({
      databases,
      waiting: sizes.inbox,
      deliver,
      acceptMs: quick ? 1_500 : 3_000,
    });
    printScaleInbox(figures.inbox, deliver);
  }
  if (only.includes('simba')) {
    log(`simba at ${sizes.simba.join(', ')} mutexes per instance`);
    figures.sizes.simba = sizes.simba;
    figures.runs.simba = { at: new Date().toISOString(), command };
    figures.simba = await scaleSimba([
      '--db',
      databases.join(','),
      '--mutexes',
      sizes.simba.join(','),
      '--measure',
      String(quick ? 4_000 : 10_000),
      '--mariadb-port',
      String(numberArg(args, '--mariadb-port', 25_464)),
    ]);
    printScaleSimba(figures.simba);
  }

  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(`${out}.json`, `${JSON.stringify(figures, null, 2)}\n`);
  execFileSync(
    process.execPath,
    [join(__dirname, 'support', 'scale-chart.mjs'), `${out}.json`, `${out}.svg`],
    {
      stdio: 'inherit',
    },
  );
  log(`wrote ${out}.json and ${out}.svg`);
}
