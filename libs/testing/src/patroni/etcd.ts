import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { waitUntil } from '../wait-until';
import { spawnLogged } from './spawn-logged';

/**
 * One etcd member for a Patroni cluster: client port `port`, peer port `port + 1`, data and log
 * in `dir` (v2 API on, no fsync: a test's DCS). Resolves once it answers `/health`.
 */
export async function startEtcd(dir: string, port: number, timeoutMs: number): Promise<ChildProcess> {
  const peer = `http://127.0.0.1:${port + 1}`;
  const etcd = spawnLogged(
    '/usr/bin/etcd',
    [
      '--name=holdfast',
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${port}`,
      `--advertise-client-urls=http://127.0.0.1:${port}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=holdfast=${peer}`,
      '--enable-v2=true',
      '--unsafe-no-fsync',
    ],
    {},
    join(dir, 'etcd.log'),
    dir,
  );
  await waitUntil(
    async () => {
      try {
        return (await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1_000) })).ok;
      } catch {
        return false;
      }
    },
    { timeout: timeoutMs, interval: 100, message: 'etcd to answer' },
  );
  return etcd;
}
