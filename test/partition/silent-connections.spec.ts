/**
 * Issue #43's own scenario, made in the network: two Simba processes, A and B, each in a network
 * namespace of its own, reach the server through a veth pair (and a TcpProxy on the host end). A
 * owns, and its coordination pool has every connection open (readiness probes arrived together).
 * Then iptables in A's namespace drops, for good, every packet of the TCP connections A has open
 * at that moment (a stateful firewall or NAT that lost its state); new connections pass. Then B's
 * namespace is partitioned (its veth taken down): A must own within ttl + transition + 3 s. Before
 * #43 A stepped down, B took over, and once B was cut off nobody owned again: A's silenced
 * connections stayed checked out of its pool for good. The same bug as
 * test/simba/silent-connections.spec.ts finds with the TcpProxy's `blackholeOpen()`.
 * Needs root, iproute2 and iptables (as on the CI machine); soak.
 */
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { monotonicMillis } from '@holdfast/core/kit';
import {
  createTestDataSource,
  TcpProxy,
  testServerDatabases,
  tsRegisterPath,
  uniqueTablePrefix,
  waitForExit,
  waitUntil,
} from '@holdfast/testing';
import { NetworkNamespace } from './support/network-namespace';
import { serverPort, serverUrlThrough } from './support/server-url';

const WORKER = join(__dirname, '..', 'simba', 'workers', 'contender.worker.ts');
const TTL = 1_000;
const TRANSITION = 1_500;
const TAKEOVER_BOUND = TTL + TRANSITION + 3_000;

interface Node {
  name: string;
  ns: NetworkNamespace;
  proxy: TcpProxy;
  child: ChildProcess;
  events: { type: string; up?: number; at: number }[];
}

function inNamespace(ns: NetworkNamespace, ...args: string[]): string {
  return execFileSync('/usr/sbin/ip', ['netns', 'exec', ns.name, ...args], { encoding: 'utf8' });
}

/** Drops, for good, every packet of the TCP connections open in `ns` now; returns their local ports. */
function dropOpenConnections(ns: NetworkNamespace): number[] {
  const ports = inNamespace(ns, 'ss', '-Htn', 'state', 'established')
    .split('\n')
    .filter(Boolean)
    .map((line) => Number(line.trim().split(/\s+/)[2].split(':').pop()));
  for (const port of ports) {
    inNamespace(ns, 'iptables', '-A', 'OUTPUT', '-p', 'tcp', '--sport', String(port), '-j', 'DROP');
    inNamespace(ns, 'iptables', '-A', 'INPUT', '-p', 'tcp', '--dport', String(port), '-j', 'DROP');
  }
  return ports;
}

function owns(node: Node): boolean {
  const last = node.events.filter((e) => e.type === 'acquired' || e.type === 'released').pop();
  return last?.type === 'acquired';
}

describe('a Simba owner whose open connections a firewall drops for good (iptables)', () => {
  it.each(testServerDatabases())(
    '[%s] owns within ttl + transition + 3 s of the other node’s partition',
    async (db) => {
      const prefix = uniqueTablePrefix(`ipt_${db}`);
      const nodes: Node[] = [];
      const slot = 12_000 + (process.pid % 1000) * 4 + (db === 'postgres' ? 0 : 2);
      try {
        for (const [i, name] of ['A', 'B'].entries()) {
          const ns = NetworkNamespace.create(`s${db[0]}${process.pid % 10000}${i}`, slot + i);
          const proxy = new TcpProxy(serverPort(db));
          const port = await proxy.start(0, ns.hostIp);
          const child = fork(WORKER, [db, prefix, 'silent', '-', '-', String(TTL), String(TRANSITION)], {
            ...ns.forkOptions(tsRegisterPath()),
            env: {
              ...process.env,
              ...serverUrlThrough(db, ns.hostIp, port),
              SIMBA_WORKER_LOG_LEVELS: 'error',
            },
            stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
          });
          const node: Node = { name, ns, proxy, child, events: [] };
          child.on('message', (m: { type: string; up?: number }) =>
            node.events.push({ ...m, at: monotonicMillis() }),
          );
          nodes.push(node);
          if (name === 'A') await waitUntil(() => owns(node), { timeout: 60_000, message: 'A to own' });
        }
        const [a, b] = nodes;
        await waitUntil(() => b.events.some((e) => e.type === 'ready'), {
          timeout: 60_000,
          message: 'B ready',
        });
        a.child.send({ type: 'health', count: 4 });
        await waitUntil(() => a.events.some((e) => e.type === 'health'), {
          timeout: 10_000,
          message: 'A health',
        });

        const ports = dropOpenConnections(a.ns);
        await new Promise((resolve) => setTimeout(resolve, TTL + TRANSITION + 1_000));
        const bTookOver = owns(b);
        expect(owns(a) && owns(b)).toBe(false);

        const partitionAt = monotonicMillis();
        b.ns.partition();
        await waitUntil(() => owns(a), {
          timeout: TAKEOVER_BOUND,
          interval: 50,
          message: `A to own within ${TAKEOVER_BOUND} ms of B's partition (B took over: ${bTookOver})`,
        });
        console.log(
          `[iptables silent ${db}] ${ports.length} connection(s) of A dropped; B took over: ${bTookOver}; ` +
            `A owns ${monotonicMillis() - partitionAt} ms after B's partition (bound ${TAKEOVER_BOUND} ms)`,
        );
      } finally {
        for (const node of nodes) {
          node.child.kill('SIGKILL');
          await waitForExit(node.child).catch(() => undefined);
          await node.proxy.stop();
          node.ns.destroy();
        }
        const dataSource = await createTestDataSource(db);
        await dataSource.query(`DROP TABLE IF EXISTS ${prefix}simba_mutex`).catch(() => undefined);
        await dataSource.destroy();
      }
    },
    120_000,
  );
});
