/**
 * npm run bench -- fleet [--db postgres,mariadb] [--n 4,16,32] [--max-connections <pg 100, mariadb 151>]
 *                        [--messages 20000] [--rounds 3] [--idle 20] [--spread] [--trace] [--no-raw]
 *                        [--port 25521]
 *
 * A fleet of N replicas of one service on one private server (test/fleet/support/fleet-run.ts):
 * each an application pool of 5, Simba with a leader job and 20 shard mutexes, a lease-database
 * lock and a delivering inbox, booted at once. Printed per N: replicas booted (and refused, with
 * the reason), connections per replica idle and the boot peak, statements per second per replica
 * idle and the busiest second against the median, the server's CPU idle, the leader's SIGKILL →
 * the next leader and the busiest second after it, leader terms, the shards' spread and moves,
 * and `--messages` accepted at once and delivered (rate, duplicates).
 * `--rounds`: delivery rounds (the medians are printed). `--spread`: SimbaModule `spread: ['shard-']`. `--trace`: the statements of the busiest second
 * after the kill (PostgreSQL, pg_stat_statements). On PostgreSQL the delivery's baseline runs
 * beside it, on the same server (unless `--no-raw`): as many processes as the fleet delivers with,
 * each the pg driver doing the same job by hand (test/fleet/workers/raw-consumer.worker.ts) on an
 * inbox table of its own; rounds alternate (the fleet's, then the raw driver's), and the ratio is
 * Holdfast's rate over the raw driver's in the same round.
 */
import { runFleet, type FleetRunResult } from '../test/fleet/support/fleet-run';
import { numberArg, printTable } from './support/bench-kit';

/** The median of the per-round ratios and their range. */
function ratioText(ratios: number[]): string {
  const sorted = [...ratios].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  return `${median.toFixed(2)}, ${sorted[0].toFixed(2)}–${sorted[sorted.length - 1].toFixed(2)}`;
}

export async function main(args: string[]): Promise<void> {
  const arg = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const dbs = (arg('--db') ?? 'postgres,mariadb').split(',') as Array<'postgres' | 'mariadb'>;
  const ns = (arg('--n') ?? '4,16,32').split(',').map(Number);
  const messages = numberArg(args, '--messages', 20_000);
  const idleMs = numberArg(args, '--idle', 20) * 1000;
  const spread = args.includes('--spread');
  const traceStatements = args.includes('--trace');
  const rawDelivery = !args.includes('--no-raw');
  const rounds = numberArg(args, '--rounds', 3);
  const inbox = args.includes('--inbox')
    ? (JSON.parse(args[args.indexOf('--inbox') + 1]) as Record<string, unknown>)
    : undefined;
  const port = numberArg(args, '--port', 25_521);
  for (const db of dbs) {
    const maxConnections = numberArg(args, '--max-connections', db === 'postgres' ? 100 : 151);
    const rows: (string | number)[][] = [];
    const profiles: (string | number)[][] = [];
    for (const n of ns) {
      const r: FleetRunResult = await runFleet({
        db,
        port,
        replicas: n,
        maxConnections,
        idleMs,
        settleMs: 10_000,
        killLeader: true,
        traceStatements,
        rawDelivery,
        rounds,
        inbox,
        messages,
        simba: spread ? ({ spread: ['shard-'] } as Record<string, unknown>) : undefined,
        log: (line) => console.log(`  [${db} N=${n}] ${line}`),
      });
      const reasons = [...new Set(r.refused.map((x) => x.code ?? x.message.slice(0, 60)))].join('; ');
      rows.push([
        String(n),
        `${r.booted}${r.refused.length ? ` (${r.refused.length} refused: ${reasons})` : ''}`,
        `${r.connections.idlePerReplica.toFixed(2)} (${r.connections.bootPeak})`,
        r.statements.perReplicaPerSecond.toFixed(2),
        `${r.statements.idleBusiestSecond.toFixed(0)} (${r.statements.idleMedianSecond.toFixed(0)})`,
        r.serverCpuPercentIdle.toFixed(1),
        r.replicaCpuPercentIdle.toFixed(2),
        r.takeoverMs === undefined ? '-' : `${(r.takeoverMs / 1000).toFixed(1)} s`,
        r.statements.afterKillBusiestSecond === undefined
          ? '-'
          : `${r.statements.afterKillBusiestSecond.toFixed(0)} (${r.statements.afterKillMedianSecond!.toFixed(0)})`,
        `${r.leaderTerms} / ${r.overlaps.leader}`,
        `${r.shards.owners} / ${r.shards.maxPerReplica} / ${r.shards.movesTotal} / ${r.shards.movesIdle}`,
        r.delivery ? r.delivery.ratePerSecond.toFixed(0) : '-',
        r.rawDelivery && r.delivery?.ratios
          ? `${r.rawDelivery.ratePerSecond.toFixed(0)} (${ratioText(r.delivery.ratios)})${r.rawDelivery.interleaved ? '' : ' †'}`
          : '-',
        r.delivery ? `${r.delivery.duplicates} / ${r.delivery.leftBehind}` : '-',
        `${r.runningErrors.length} / ${r.runningWarnings.length}`,
      ]);
      for (const [who, p, rate] of [
        ['Holdfast', r.delivery?.profile, r.delivery?.ratePerSecond],
        ['raw driver', r.rawDelivery?.profile, r.rawDelivery?.ratePerSecond],
      ] as const)
        if (p && rate)
          profiles.push([
            `${n} (${r.delivery?.processes ?? '-'})`,
            who,
            rate.toFixed(0),
            String(p.claims),
            p.rowsPerClaim.toFixed(0),
            p.serverMsPerClaim.toFixed(2),
            String(p.deletes),
            p.serverMsPerDelete.toFixed(2),
            p.processCpuMsPerThousand.toFixed(0),
            p.serverCpuMsPerThousand.toFixed(0),
          ]);
      if (r.runningWarnings.length)
        console.log(`  warnings, first 8:\n    ${r.runningWarnings.slice(0, 8).join('\n    ')}`);
      if (r.runningErrors.length)
        console.log(`  errors, first 5:\n    ${r.runningErrors.slice(0, 5).join('\n    ')}`);
    }
    printTable(
      `Fleet on ${db}, max_connections ${maxConnections}${spread ? ', spread shards' : ''}`,
      [
        'N',
        'booted',
        'connections per replica idle (boot peak, all)',
        'statements/s per replica',
        'busiest second idle (median)',
        'server CPU % idle',
        'CPU % per replica idle',
        'leader SIGKILL → new leader',
        'busiest second after the kill (median)',
        'leader terms / overlaps',
        'shards: owners / most per replica / moves / moves idle',
        `delivery of ${messages} (msg/s, median of ${rounds})`,
        'raw driver, as many processes (msg/s; Holdfast ÷ raw, median and range)',
        'duplicates / rows left behind',
        'ERROR / WARN lines of running replicas',
      ],
      rows,
    );
    if (rows.some((row) => String(row[row.length - 3]).endsWith('†')))
      console.log('† the raw driver ran after the fleet stopped: the server had no room for both');
    if (profiles.length)
      printTable(
        `Where the delivery's time goes on ${db} (pg_stat_statements; CPU from /proc, delivering processes and the server's)`,
        [
          'N (delivering)',
          'who',
          'msg/s',
          'claims',
          'rows per claim',
          'server ms per claim',
          'deletes',
          'server ms per delete',
          'process CPU ms per 1,000 messages',
          'server CPU ms per 1,000 messages',
        ],
        profiles,
      );
  }
}
