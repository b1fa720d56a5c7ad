import { join } from 'node:path';
import { postgresBinDir } from '../private-postgres';
import type { PatroniNode } from './patroni-node';

/** The Patroni settings a cluster's nodes share (PatroniClusterOptions, resolved). */
export interface PatroniSettings {
  ttl: number;
  loopWait: number;
  retryTimeout: number;
  synchronous: boolean;
  primaryStartTimeout?: number;
}

/**
 * The `patroni.yml` of `node` (as an object; YAML is a superset of JSON): its REST API and
 * PostgreSQL ports, etcd at `etcdPort` (through the node's proxy when it has one), the cluster's
 * bootstrap DCS settings, trust authentication on 127.0.0.1, fsync off.
 */
export function patroniConfig(node: PatroniNode, etcdPort: number, options: PatroniSettings) {
  const { ttl, loopWait, retryTimeout, synchronous, primaryStartTimeout } = options;
  const hba = [
    'local all all trust',
    'host all all 127.0.0.1/32 trust',
    'host replication all 127.0.0.1/32 trust',
  ];
  return {
    scope: `holdfast-${etcdPort}`,
    name: node.name,
    log: { level: 'INFO' },
    restapi: { listen: `127.0.0.1:${node.restPort}`, connect_address: `127.0.0.1:${node.restPort}` },
    // Through the node's proxy, if any: `use_proxies` keeps Patroni from discovering etcd's own
    // address (and going around the proxy).
    etcd: node.proxies
      ? { host: `127.0.0.1:${node.proxies.etcd.port}`, use_proxies: true }
      : { host: `127.0.0.1:${etcdPort}` },
    bootstrap: {
      dcs: {
        ttl,
        loop_wait: loopWait,
        retry_timeout: retryTimeout,
        maximum_lag_on_failover: 1_048_576,
        synchronous_mode: synchronous,
        ...(primaryStartTimeout !== undefined ? { primary_start_timeout: primaryStartTimeout } : {}),
        postgresql: {
          use_pg_rewind: true,
          use_slots: true,
          parameters: {
            wal_level: 'replica',
            hot_standby: 'on',
            wal_log_hints: 'on',
            max_wal_senders: 10,
            max_replication_slots: 10,
            wal_keep_size: '64MB',
            max_connections: 100,
          },
        },
      },
      initdb: [{ encoding: 'UTF8' }, { auth: 'trust' }],
    },
    postgresql: postgresqlSection(node, hba),
  };
}

/** The `postgresql` section of a node's config: its ports, data directory, users, settings and pg_hba. */
function postgresqlSection(node: PatroniNode, hba: string[]) {
  return {
    listen: `127.0.0.1:${node.port}`,
    connect_address: `127.0.0.1:${node.port}`,
    data_dir: node.dataDir,
    bin_dir: postgresBinDir(),
    pgpass: join(node.dir, 'pgpass'),
    authentication: {
      superuser: { username: 'postgres', password: 'postgres' },
      replication: { username: 'replicator', password: 'replicator' },
      rewind: { username: 'postgres', password: 'postgres' },
    },
    // fsync off as in PrivatePostgres: a killed server keeps what it wrote to the OS.
    parameters: {
      unix_socket_directories: node.dir,
      fsync: 'off',
      full_page_writes: 'on',
      shared_buffers: '16MB',
    },
    pg_hba: hba,
  };
}
