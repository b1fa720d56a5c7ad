import type { QueryRunner } from 'typeorm';
import { driverConnectionOf } from './connection-bound';

/** The socket calls a long-held connection needs, on pg's and mysql2's sockets alike. */
interface DriverSocket {
  once?(event: 'close', listener: () => void): void;
  setKeepAlive?(enable: boolean, initialDelay: number): void;
}

export interface SocketWatch {
  /** TCP keepalive's first probe after this much idle time (ms). */
  keepAliveMs: number;
  /** Called once, when the socket closes (whoever closed it). */
  onClose: () => void;
}

/**
 * For a connection held for a long time (a lock's): turns TCP keepalive on, so a dead peer is
 * noticed even while the connection sits idle, and calls `onClose` when its socket closes, so the
 * holder learns at once that the server has dropped its session. No effect where the connection
 * has no socket (SQLite).
 */
export function watchRunnerSocket(runner: QueryRunner, watch: SocketWatch): void {
  const connection = driverConnectionOf(runner) as
    { connection?: { stream?: DriverSocket }; stream?: DriverSocket } | undefined;
  const socket = connection?.connection?.stream ?? connection?.stream; // pg, mysql2
  socket?.setKeepAlive?.(true, watch.keepAliveMs);
  socket?.once?.('close', watch.onClose);
}
