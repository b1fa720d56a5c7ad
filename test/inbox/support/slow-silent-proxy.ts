import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy for the "slow, then silent" worker: every chunk, both ways, is held `delayMs`
 * before it is forwarded (order kept); `silence()` then stops forwarding in both directions for
 * good while every socket stays open, as with a frozen VM or a firewall that lost its state.
 * It reads the MySQL/MariaDB connection id from each server handshake, and knows the local port
 * of each upstream socket (what PostgreSQL shows as `pg_stat_activity.client_port`).
 */
export class SlowSilentProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private silent = false;
  /** When set: the first client chunk that contains it is forwarded, then nothing more. */
  private lastWords?: Buffer;
  private passedLastWords?: () => void;
  /** MySQL/MariaDB connection ids, from the servers' handshakes. */
  readonly connectionIds = new Set<number>();
  /** Local ports of the upstream sockets. */
  readonly upstreamPorts = new Set<number>();
  port = 0;

  constructor(
    private readonly targetPort: number,
    /** Delay per chunk; may be changed at any time (e.g. 0 while the worker boots). */
    public delayMs: number,
    private readonly targetHost = '127.0.0.1',
  ) {}

  async start(): Promise<number> {
    this.server = createServer((client) => {
      const upstream = connect(this.targetPort, this.targetHost);
      upstream.on('connect', () => this.upstreamPorts.add(upstream.localPort!));
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      let first = true;
      upstream.on('data', (chunk) => {
        if (first) {
          first = false;
          // MySQL protocol v10 handshake: 4-byte header, version 10, server version + NUL, then
          // the 4-byte little-endian connection id.
          if (chunk[4] === 10) {
            const end = chunk.indexOf(0, 5);
            if (end > 0 && end + 5 <= chunk.length) this.connectionIds.add(chunk.readUInt32LE(end + 1));
          }
        }
        this.forward(chunk, client);
      });
      client.on('data', (chunk) => {
        if (this.lastWords && !this.silent && chunk.includes(this.lastWords)) {
          // This statement reaches the server; its answer and everything after it do not.
          this.silent = true;
          this.passedLastWords?.();
          setTimeout(() => upstream.destroyed || upstream.write(chunk), this.delayMs);
          return;
        }
        this.forward(chunk, upstream);
      });
      const close = () => {
        if (this.silent) return; // silent: nothing passes, not even a close
        client.destroy();
        upstream.destroy();
      };
      client.on('close', close);
      upstream.on('close', close);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server!.address() as { port: number }).port;
    return this.port;
  }

  private forward(chunk: Buffer, to: Socket): void {
    if (this.silent) return;
    setTimeout(() => {
      if (!this.silent && !to.destroyed) to.write(chunk);
    }, this.delayMs);
  }

  /**
   * Goes silent right after the first statement containing `marker` leaves for the server (e.g.
   * a locking read, so that the server holds the worker's transaction open with its row locks).
   * Resolves when that statement has been let through.
   */
  silenceAfter(marker: string): Promise<void> {
    this.lastWords = Buffer.from(marker);
    return new Promise<void>((resolve) => (this.passedLastWords = resolve));
  }

  /** From now on nothing passes, in either direction; the sockets stay open. */
  silence(): void {
    this.silent = true;
  }

  async stop(): Promise<void> {
    this.silent = true;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
