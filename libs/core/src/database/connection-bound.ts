import type { DataSource, QueryRunner } from 'typeorm';
import { SqlTimeoutError } from '../errors/holdfast.error';
import { withTimeout } from '../time/with-timeout';

interface DriverSocket {
  destroy(): void;
  readonly destroyed?: boolean;
  once?(event: 'close', listener: () => void): void;
}

/** What a pooled connection looks like underneath TypeORM, for the two network drivers. */
export interface DriverConnection {
  /** pg's Client keeps its socket here. */
  connection?: { stream?: DriverSocket };
  /** mysql2's PoolConnection keeps it here, and removes itself from the pool on destroy(). */
  stream?: DriverSocket;
  destroy?(): void;
  /** pg-pool's client: a release with an error makes the pool drop it instead of reusing it. */
  release?(error?: Error | boolean): void;
}

/** The driver connection a connected QueryRunner holds (pg Client, mysql2 PoolConnection). */
export function driverConnectionOf(runner: QueryRunner): DriverConnection | undefined {
  return (runner as unknown as { databaseConnection?: DriverConnection }).databaseConnection;
}

/**
 * Closes a driver connection's socket at once, without a goodbye on the network (a silent peer
 * would never answer it), and takes it out of its pool (mysql2: `destroy()`).
 */
export function destroyDriverConnection(connection: DriverConnection | undefined): void {
  try {
    if (typeof connection?.destroy === 'function') connection.destroy(); // mysql2: leaves the pool
    connection?.connection?.stream?.destroy(); // pg
    connection?.stream?.destroy(); // mysql2
  } catch {
    // a socket that is gone already
  }
}

/** The connections a DataSource's pool holds now, checked out or idle (pg-pool, mysql2). */
export function poolConnections(dataSource: DataSource): DriverConnection[] {
  const driver = dataSource.driver as unknown as {
    master?: { _clients?: DriverConnection[] };
    pool?: { _allConnections?: { toArray?(): DriverConnection[] } };
  };
  return [...(driver.master?._clients ?? []), ...(driver.pool?._allConnections?.toArray?.() ?? [])];
}

/**
 * Gives the sockets of `connections` up to `ms` to close after a pool's end (each driver says
 * goodbye and waits for the server to close), then destroys those still open: on a silent path
 * the server's close never comes, and a socket waiting for it keeps the process alive.
 */
export async function closeSockets(connections: readonly DriverConnection[], ms: number): Promise<void> {
  const open = connections
    .map((c) => c.connection?.stream ?? c.stream)
    .filter((socket): socket is DriverSocket => socket !== undefined && socket.destroyed !== true);
  if (open.length === 0) return;
  const closed = Promise.all(
    open.map((socket) => new Promise<void>((resolve) => socket.once?.('close', resolve) ?? resolve())),
  );
  await withTimeout(closed, ms, () => undefined);
  for (const socket of open) if (socket.destroyed !== true) socket.destroy();
}

/**
 * Destroys the connection of a QueryRunner (its socket closed, never reused) and gives the runner
 * up: pg's pool is told the connection is broken (a release with an error drops it from the
 * pool), mysql2's connection left its pool when destroyed. Never waits on the network.
 */
export function destroyRunnerConnection(runner: QueryRunner, reason = 'connection destroyed'): void {
  destroyDriverConnection(driverConnectionOf(runner));
  const releasePg = (runner as unknown as { releasePostgresConnection?: (err?: Error) => Promise<void> })
    .releasePostgresConnection;
  if (typeof releasePg === 'function') {
    void releasePg.call(runner, new Error(reason)).catch(() => undefined);
  } else {
    void runner.release().catch(() => undefined);
  }
}

/**
 * Which pooled connections of one DataSource a bounded SqlClient still trusts. A statement that
 * passes its bound starts a new generation: every connection that has not answered since then is
 * suspect (when one connection goes silent, the pooled connections beside it, on the same network
 * path, usually went silent too), and is destroyed when it is next checked out instead of costing
 * another bound each. A connection seen for the first time is trusted (it is new, or only the
 * application used it so far).
 */
export class ConnectionTrust {
  private static readonly byDataSource = new WeakMap<DataSource, ConnectionTrust>();
  private generation = 0;
  private readonly seen = new WeakMap<object, number>();

  static of(dataSource: DataSource): ConnectionTrust {
    let trust = ConnectionTrust.byDataSource.get(dataSource);
    if (!trust) ConnectionTrust.byDataSource.set(dataSource, (trust = new ConnectionTrust()));
    return trust;
  }

  /** False for a connection that has not answered since the last timeout. */
  trusted(connection: object | undefined): boolean {
    if (!connection) return true;
    const generation = this.seen.get(connection);
    if (generation === undefined) {
      this.seen.set(connection, this.generation);
      return true;
    }
    return generation >= this.generation;
  }

  /** The connection answered: it is alive now. */
  answered(connection: object | undefined): void {
    if (connection) this.seen.set(connection, this.generation);
  }

  /** A statement passed its bound: connections that have not answered since are suspect. */
  timedOut(): void {
    this.generation++;
  }
}

/**
 * `work` within `ms`, else a SqlTimeoutError after `onTimeout` ran (which destroys what waited).
 */
export function boundedWait<T>(
  work: Promise<T>,
  ms: number,
  waitingFor: 'connection' | 'answer',
  onTimeout: () => void,
): Promise<T> {
  return withTimeout(work, ms, () => {
    onTimeout();
    throw new SqlTimeoutError(waitingFor, ms);
  });
}
