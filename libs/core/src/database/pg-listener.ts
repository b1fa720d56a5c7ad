import type { DataSource } from 'typeorm';
import { ListenConnectionError } from '../errors/kit.errors';
import { withTimeout } from '../time/with-timeout';
import { destroyDriverConnection, type DriverConnection } from './connection-bound';

/**
 * How long `close()` lets the connection say goodbye before its socket is destroyed: a healthy
 * server answers within a round trip; a silent path (a firewall that lost its state) never does.
 */
const CLOSE_WAIT_MS = 1_000;

/** The part of pg's Client a listener uses. */
interface PgClient {
  connect(): Promise<void>;
  query(sql: string): Promise<unknown>;
  end(): Promise<void>;
  on(event: 'notification', listener: (n: { channel: string; payload?: string }) => void): this;
  on(event: 'error', listener: (error: Error) => void): this;
  on(event: 'end', listener: () => void): this;
}
type PgClientClass = new (config: Record<string, unknown>) => PgClient;

/** What a `PgListener` listens to, how it connects, and whom it tells. */
export interface PgListenerOptions {
  /** The channel to LISTEN on (quoted as an identifier). */
  channel: string;
  /** A connection string to listen through; default the DataSource's own connection options. */
  connectionString?: string;
  /** The connection's `application_name`, as `pg_stat_activity` shows it. */
  applicationName: string;
  /** Bound on connecting and on the LISTEN statement, in ms. */
  connectTimeoutMs: number;
  /** A notification on the channel arrived. */
  onNotification(payload: string | undefined): void;
  /** The connection failed or was closed by the server (never after `close()`). */
  onDropped(error?: Error): void;
}

/**
 * PostgreSQL LISTEN on a dedicated connection: its own pg Client of the driver the DataSource
 * already uses, never a pooled one (a pool hands connections to others, and PgBouncer in
 * transaction mode drops a session's LISTEN), with TCP keepalive on. Opened by `listen()`,
 * ended by `close()`; a failure or a close by the server is reported once through `onDropped`,
 * after which the listener is spent (open a new one to listen again).
 */
export class PgListener {
  private readonly client: PgClient;
  private closed = false;

  /** Throws when the DataSource has no pg driver to open the connection with. */
  constructor(
    dataSource: DataSource,
    private readonly options: PgListenerOptions,
  ) {
    this.client = pgClient(dataSource, options);
    this.client.on('error', (error) => this.drop(error));
    this.client.on('end', () => this.drop());
    this.client.on('notification', (n) => {
      if (n.channel === options.channel) options.onNotification(n.payload);
    });
  }

  /** Connects and sends LISTEN, each within `connectTimeoutMs`. */
  async listen(): Promise<void> {
    const ms = this.options.connectTimeoutMs;
    await withTimeout(this.client.connect(), ms, () => {
      throw new ListenConnectionError(`connecting took longer than ${ms} ms`);
    });
    await withTimeout(this.client.query(`LISTEN "${this.options.channel}"`), ms, () => {
      throw new ListenConnectionError(`LISTEN took longer than ${ms} ms`);
    });
  }

  /**
   * Ends the connection (errors ignored: it may be gone already); `onDropped` is not called after.
   * Bounded: pg's `end()` waits for the server to close the socket, which a silent path never
   * does, so after CLOSE_WAIT_MS the socket is destroyed (#43).
   */
  async close(): Promise<void> {
    this.closed = true;
    await withTimeout(
      this.client.end().catch(() => undefined),
      CLOSE_WAIT_MS,
      () => undefined,
    );
    this.destroy();
  }

  private drop(error?: Error): void {
    if (this.closed) return;
    this.closed = true;
    // Failed or closed by the server: nothing to say goodbye to, and a half-closed socket would
    // keep the process alive until the network gave up on it.
    this.destroy();
    this.options.onDropped(error);
  }

  private destroy(): void {
    destroyDriverConnection(this.client as unknown as DriverConnection);
  }
}

/**
 * A pg Client of the driver the DataSource already uses, on the DataSource's own connection
 * options, or on `connectionString` when set.
 */
function pgClient(dataSource: DataSource, options: PgListenerOptions): PgClient {
  const driver = dataSource.driver as unknown as {
    postgres?: { Client?: PgClientClass };
    master?: { options?: Record<string, unknown> };
  };
  const Client = driver.postgres?.Client;
  if (!Client)
    throw new ListenConnectionError('the DataSource has no pg driver to open a LISTEN connection with');
  const base: Record<string, unknown> = options.connectionString
    ? { connectionString: options.connectionString }
    : { ...(driver.master?.options ?? {}) };
  return new Client({
    ...base,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    connectionTimeoutMillis: options.connectTimeoutMs,
    application_name: options.applicationName,
  });
}
