/**
 * npm run bench -- inbox-span-cost [--rounds 5] [--n 1000000]
 *
 * What the delivery's tracing adds per message when `@opentelemetry/api` is installed and no SDK
 * is registered (its no-op tracer): the per-message work the delivery did before (a HandlerRun
 * and its context) as the baseline, against the same plus a `process` span started and ended
 * (DeliveryTracing.process). Synchronous loops, `--rounds` rounds taking turns; the ratio is
 * with ÷ without per round, median. Then the same for an accept: an awaited call (the insert's
 * stand-in) alone, against the same inside AcceptTracing.send (the `send` span, nothing carried).
 */
import { HandlerRun } from '../libs/inbox/src/delivery/handler-run';
import { AcceptTracing } from '../libs/inbox/src/tracing/accept-tracing';
import { DeliveryTracing } from '../libs/inbox/src/tracing/delivery-tracing';
import { median, numberArg, printTable } from './support/bench-kit';

function perMessageNs(n: number, withSpan: boolean, tracing: DeliveryTracing): number {
  let sink = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const run = new HandlerRun('m');
    if (run.context) sink++;
    if (withSpan) tracing.process('m', 0)?.end();
  }
  const ns = Number(process.hrtime.bigint() - started) / n;
  return sink >= 0 ? ns : NaN;
}

async function perAcceptNs(n: number, withSpan: boolean, tracing: AcceptTracing): Promise<number> {
  const ids = ['m'];
  const insert = async (carried: string | undefined) => (carried === undefined ? 1 : 0);
  let sink = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < n; i++) sink += withSpan ? await tracing.send(ids, insert) : await insert(undefined);
  const ns = Number(process.hrtime.bigint() - started) / n;
  return sink >= 0 ? ns : NaN;
}

async function acceptRounds(rounds: number, n: number): Promise<void> {
  const tracing = new AcceptTracing(
    () => 'COR_MESSAGE',
    () => false,
  );
  await perAcceptNs(n / 10, true, tracing); // warm-up
  const rows: (string | number)[][] = [];
  const ratios: number[] = [];
  for (let r = 1; r <= rounds; r++) {
    const without = await perAcceptNs(n, false, tracing);
    const withSpan = await perAcceptNs(n, true, tracing);
    ratios.push(withSpan / without);
    rows.push([
      r,
      without.toFixed(1),
      withSpan.toFixed(1),
      (withSpan - without).toFixed(1),
      (withSpan / without).toFixed(2),
    ]);
  }
  rows.push(['median', '', '', '', median(ratios).toFixed(2)]);
  printTable(
    'Per accept: an awaited call, without and with a no-op send span around it (API, no SDK, traceContext off)',
    ['round', 'without, ns', 'with span, ns', 'added, ns', 'ratio'],
    rows,
  );
}

export async function main(args: string[]): Promise<void> {
  const rounds = numberArg(args, '--rounds', 5);
  const n = numberArg(args, '--n', 1_000_000);
  const tracing = new DeliveryTracing(() => 'COR_MESSAGE');
  perMessageNs(n / 10, true, tracing); // warm-up
  const rows: (string | number)[][] = [];
  const ratios: number[] = [];
  for (let r = 1; r <= rounds; r++) {
    const without = perMessageNs(n, false, tracing);
    const withSpan = perMessageNs(n, true, tracing);
    ratios.push(withSpan / without);
    rows.push([
      r,
      without.toFixed(1),
      withSpan.toFixed(1),
      (withSpan - without).toFixed(1),
      (withSpan / without).toFixed(2),
    ]);
  }
  rows.push(['median', '', '', '', median(ratios).toFixed(2)]);
  printTable(
    'Per message: a HandlerRun and its context, without and with a no-op process span (API, no SDK)',
    ['round', 'without, ns', 'with span, ns', 'added, ns', 'ratio'],
    rows,
  );
  await acceptRounds(rounds, n);
}
