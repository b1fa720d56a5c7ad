import { createServer, connect, type Server, type Socket } from 'node:net';

/** One proxied connection: the application's socket and the server's. */
interface Link {
  client: Socket;
  upstream: Socket;
  /** Set by `blackhole()`: nothing passes any more, in either direction, for good. */
  silenced: boolean;
  /** Set by `blackhole({ passCloses: false })`: not even a close passes. */
  holdsCloses?: boolean;
  /** The application has sent since the server last answered: more of it is the same trip. */
  asking: boolean;
}

/**
 * A TCP proxy a test controls, to simulate network trouble without touching the server:
 * `delay(ms)` slows every chunk down, `blackhole()` makes open connections silent (sockets stay
 * open, nothing passes) and refuses new ones, `blackholeOpen()` silences only the connections
 * open now and lets new ones through, `cut()` drops every connection, and `restore()` lets new
 * connections through again.
 */
export class TcpProxy {
  private server?: Server;
  private readonly links = new Set<Link>();
  /** Set by `loseAnswerTo`: the request whose answer is lost, once. */
  private loseAfter?: (sent: string, before: string | undefined) => boolean;
  private open = true;
  /** Set by `blackhole({ dropNew: true })`: new connections are accepted, then hear nothing. */
  private dropNew = false;
  /** Connections accepted while `dropNew`: never forwarded, destroyed by `cut()` and `stop()`. */
  private readonly held = new Set<Socket>();
  private delayMs = 0;
  private trips = 0;
  port = 0;

  constructor(
    private readonly targetPort: number,
    private readonly targetHost = '127.0.0.1',
  ) {}

  /** Listens on `listenHost` (default the loopback; a veth address for a network namespace). */
  async start(listenPort = 0, listenHost = '127.0.0.1'): Promise<number> {
    this.server = createServer((client) => {
      if (!this.open) {
        if (this.dropNew) {
          // As on a path that drops every packet: the connect (here) or the first answer never
          // comes, so the application waits for its own timeout instead of a refusal.
          client.pause();
          client.on('error', () => undefined).on('close', () => this.held.delete(client));
          this.held.add(client);
          return;
        }
        client.destroy();
        return;
      }
      const upstream = connect(this.targetPort, this.targetHost);
      // As the drivers and servers do on theirs: without it, Nagle's algorithm holds the second
      // small write of an answer (a result set, then its OK) until the peer's delayed ACK, ~40 ms.
      client.setNoDelay(true);
      upstream.setNoDelay(true);
      const link: Link = { client, upstream, silenced: false, asking: false };
      this.links.add(link);
      this.forward(link, client, upstream, true);
      this.forward(link, upstream, client, false);
      const close = () => {
        // A dropped path passes no close either: each side notices only by its own timeouts.
        if (link.silenced && link.holdsCloses) return;
        client.destroy();
        upstream.destroy();
        this.links.delete(link);
      };
      client.on('error', close).on('close', close);
      upstream.on('error', close).on('close', close);
    });
    await new Promise<void>((resolve) => this.server!.listen(listenPort, listenHost, resolve));
    this.port = (this.server!.address() as { port: number }).port;
    return this.port;
  }

  /**
   * Copies `from` to `to`, in order, each chunk after the delay in force when it arrived, with
   * backpressure. One queue per direction, sent from its head: a chunk never overtakes the one
   * before it, whatever the delays (one timer per chunk did not promise that: Node starts a
   * timer from the event loop's cached time, so a later chunk with a shorter timeout could fire
   * first, and a chunk arriving after the delay fell to 0 went out at once).
   */
  private forward(link: Link, from: Socket, to: Socket, request: boolean): void {
    const queue: { chunk: Buffer; due: number }[] = [];
    let timer: NodeJS.Timeout | undefined;
    let waitingForDrain = false;
    let before: string | undefined;
    const sendDue = (all = false) => {
      timer = undefined;
      if (link.silenced || to.destroyed) return void (queue.length = 0);
      const now = performance.now();
      while (queue.length > 0 && (all || !waitingForDrain)) {
        const next = queue[0];
        if (!all && next.due > now) {
          timer = setTimeout(sendDue, Math.max(1, Math.ceil(next.due - now)));
          return;
        }
        queue.shift();
        if (!to.write(next.chunk) && !waitingForDrain) {
          waitingForDrain = true;
          from.pause();
          to.once('drain', () => {
            waitingForDrain = false;
            if (link.silenced) return;
            from.resume();
            if (timer === undefined) sendDue();
          });
        }
      }
    };
    from.on('data', (chunk: Buffer) => {
      if (link.silenced) return;
      // A round trip starts when the application sends after an answer (or first on a connection):
      // statements it sends without waiting for the answer in between count once.
      if (request && !link.asking) this.trips++;
      link.asking = request;
      queue.push({ chunk, due: performance.now() + this.delayMs });
      if (request && this.loseAfter) {
        const text = chunk.toString('latin1');
        if (this.loseAfter(text, before)) {
          // The request reaches the server (now, with what was queued before it); nothing comes
          // back on this connection any more.
          this.loseAfter = undefined;
          clearTimeout(timer);
          sendDue(true);
          link.silenced = true;
          return;
        }
        before = text;
      }
      if (timer === undefined && !waitingForDrain) sendDue();
    });
  }

  /** Delays every chunk, in both directions, by `ms` from now on (0: no delay). */
  delay(ms: number): void {
    this.delayMs = Math.max(0, ms);
  }

  /** Drops all connections and refuses new ones. */
  cut(): void {
    this.open = false;
    this.dropNew = false;
    for (const { client, upstream } of this.links) {
      client.destroy();
      upstream.destroy();
    }
    this.links.clear();
    for (const client of this.held) client.destroy();
    this.held.clear();
  }

  /**
   * Stops forwarding without closing anything, as when a network path silently drops every
   * packet: open connections stay open and nothing passes either way (chunks already on their
   * way are dropped too), and new connections are refused. Those connections stay silent for
   * good, even after `restore()`; the application has to notice and replace them.
   *
   * By default a side that closes its socket still closes the other (the server ending a silent
   * transaction closes the application's socket too); `passCloses: false` drops closes as well,
   * as a real dropped path does: the application then learns nothing from the server, and the
   * server nothing from the application, until `cut()` or `stop()`.
   *
   * `dropNew: true` also leaves new connections unanswered instead of refusing them: each is
   * accepted and then hears nothing (a health check or a connect waits for its own timeout), until
   * `restore()`.
   */
  blackhole(options: { passCloses?: boolean; dropNew?: boolean } = {}): void {
    this.open = false;
    this.dropNew = options.dropNew === true;
    for (const link of this.links) {
      link.silenced = true;
      link.holdsCloses = options.passCloses === false;
      link.client.pause();
      link.upstream.pause();
    }
  }

  /**
   * Makes the connections open at this moment silent for good, as `blackhole()` does, and lets
   * new ones through as usual: what a stateful firewall or NAT that lost its connection table
   * does (its established flows are dropped, new flows get new state). The application has to
   * notice that its open connections say nothing and do its work on new ones. `passCloses` as
   * for `blackhole()`; a lost firewall state drops closes too (`passCloses: false`).
   */
  blackholeOpen(options: { passCloses?: boolean } = {}): void {
    for (const link of this.links) {
      if (link.silenced) continue;
      link.silenced = true;
      link.holdsCloses = options.passCloses === false;
      link.client.pause();
      link.upstream.pause();
    }
  }

  /** Open connections made silent by `blackhole()`, `blackholeOpen()` or a lost answer. */
  get silencedConnections(): number {
    let n = 0;
    for (const link of this.links) if (link.silenced) n++;
    return n;
  }

  /**
   * Lets the next request that `matches` (the text of a chunk the application sends, and of the
   * chunk it sent before on that connection) reach the server, then drops everything on that
   * connection from then on, its answer first: the server runs the statement, the application
   * never learns it did. Other connections, and new ones, are not touched. Once.
   */
  loseAnswerTo(matches: (sent: string, before: string | undefined) => boolean): void {
    this.loseAfter = matches;
  }

  /** Accepts new connections again (and stops delaying). */
  restore(): void {
    this.open = true;
    this.dropNew = false;
    this.delayMs = 0;
  }

  /**
   * Round trips through the proxy since it started (or since `resetRoundTrips`), over every
   * connection: each time an application sends on a connection after the server's last answer
   * there (or first), one more. Connection set-up counts too (the handshake's exchanges).
   */
  get roundTrips(): number {
    return this.trips;
  }

  /** Counts round trips from zero again. */
  resetRoundTrips(): void {
    this.trips = 0;
  }

  /**
   * The round trips `work` costs, including what it sends after its caller has the answer (a
   * session reset before a connection goes back to its pool): counted from a quiet proxy until it
   * is quiet again.
   */
  async roundTripsOf(work: () => Promise<unknown>): Promise<number> {
    await this.quiet();
    this.resetRoundTrips();
    await work();
    await this.quiet();
    return this.trips;
  }

  /** Resolves once no round trip has passed the proxy for `settleMs`. */
  async quiet(settleMs = 150): Promise<void> {
    for (let last = -1; last !== this.trips;) {
      last = this.trips;
      await new Promise((resolve) => setTimeout(resolve, settleMs));
    }
  }

  /** Open connections through the proxy. */
  get connections(): number {
    return this.links.size;
  }

  async stop(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
