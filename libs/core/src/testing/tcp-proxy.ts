import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy a test controls, to simulate a database outage without touching the server:
 * `cut()` drops every open connection and refuses new ones; `restore()` lets them through again.
 */
export class TcpProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private open = true;
  port = 0;

  constructor(
    private readonly targetPort: number,
    private readonly targetHost = '127.0.0.1',
  ) {}

  async start(listenPort = 0): Promise<number> {
    this.server = createServer((client) => {
      if (!this.open) {
        client.destroy();
        return;
      }
      const upstream = connect(this.targetPort, this.targetHost);
      this.track(client);
      this.track(upstream);
      client.pipe(upstream);
      upstream.pipe(client);
      const close = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', close).on('close', close);
      upstream.on('error', close).on('close', close);
    });
    await new Promise<void>((resolve) => this.server!.listen(listenPort, '127.0.0.1', resolve));
    this.port = (this.server!.address() as { port: number }).port;
    return this.port;
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
  }

  /** Drops all connections and refuses new ones. */
  cut(): void {
    this.open = false;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  /**
   * Stops forwarding without closing anything: packets are silently swallowed, as when a
   * network partition leaves connections hanging.
   */
  blackhole(): void {
    this.open = false;
    for (const s of this.sockets) s.pause();
  }

  restore(): void {
    this.open = true;
  }

  async stop(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
