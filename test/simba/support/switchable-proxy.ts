import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A database endpoint for failover tests (a virtual IP, as HAProxy or a DNS switch gives):
 * forwards to one port, and `switchTo(port)` drops every open connection and sends new ones to
 * another server.
 */
export class SwitchableProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private target: number) {}

  async start(listenPort = 0): Promise<number> {
    this.server = createServer((client) => {
      const upstream = connect(this.target, '127.0.0.1');
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
      }
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

  switchTo(port: number): void {
    this.target = port;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
