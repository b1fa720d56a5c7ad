import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PatroniNode } from './patroni-node';
import { safeRead, spawnLogged } from './spawn-logged';

/**
 * HAProxy in front of the nodes on `endpointPort`: connections go to the node whose Patroni
 * answers `GET /primary` with 200 (through the node's proxies when it has them); a node marked
 * down has its sessions closed. Config and log in `dir`.
 */
export function startHaproxy(dir: string, nodes: readonly PatroniNode[], endpointPort: number): ChildProcess {
  const servers = nodes
    .map(
      (n) =>
        `  server ${n.name} 127.0.0.1:${n.proxies?.postgres.port ?? n.port} check port ${n.proxies?.rest.port ?? n.restPort}`,
    )
    .join('\n');
  const config = [
    'global',
    '  maxconn 300',
    'defaults',
    '  mode tcp',
    '  timeout connect 2s',
    '  timeout client 30m',
    '  timeout server 30m',
    // A check that takes long is not a down node: Patroni's /primary answers a demoted or
    // stopped leader at once (503, refused); on a loaded machine a healthy one may take over a
    // second, and a check timing out then would mark the primary down and cut its sessions.
    '  timeout check 5s',
    'listen primary',
    `  bind 127.0.0.1:${endpointPort}`,
    '  option httpchk GET /primary',
    '  http-check expect status 200',
    // Checked every 500 ms, down after 2 failures, up after 1; a node marked down has its
    // connections closed, so clients reconnect to the new primary instead of hanging.
    '  default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions',
    servers,
    '',
  ].join('\n');
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, config);
  return spawnLogged('/usr/sbin/haproxy', ['-f', file, '-db'], {}, join(dir, 'haproxy.log'), dir);
}

/** How many of `nodes` HAProxy's log (in `dir`) has marked down. */
export function nodesMarkedDown(dir: string, nodes: readonly PatroniNode[]): number {
  const log = safeRead(join(dir, 'haproxy.log'));
  return nodes.filter((n) => log.includes(`Server primary/${n.name} is DOWN`)).length;
}
