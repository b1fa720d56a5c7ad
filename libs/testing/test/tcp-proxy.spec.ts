import { createServer, connect, type Server, type Socket } from 'node:net';
import { monotonicMillis } from '@holdfast/core/kit';
import { TcpProxy, waitUntil } from '@holdfast/testing';

/** An echo server and a client through the proxy. */
describe('TcpProxy', () => {
  let echo: Server;
  let proxy: TcpProxy;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    echo = createServer((s) => s.pipe(s));
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  });
  beforeEach(async () => {
    proxy = new TcpProxy((echo.address() as { port: number }).port);
    await proxy.start();
  });
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await proxy.stop();
  });
  afterAll(() => new Promise<void>((resolve) => echo.close(() => resolve())));

  const client = async () => {
    const socket = connect(proxy.port, '127.0.0.1');
    sockets.push(socket);
    const received: Buffer[] = [];
    socket.on('data', (d: Buffer) => received.push(d));
    socket.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    await waitUntil(() => proxy.connections > 0, { message: 'the proxy to accept' });
    return { socket, text: () => Buffer.concat(received).toString() };
  };

  it('forwards both ways', async () => {
    const c = await client();
    c.socket.write('hello');
    await waitUntil(() => c.text() === 'hello', { message: 'the echo' });
  });

  it('delays every chunk in both directions, keeping their order', async () => {
    const c = await client();
    proxy.delay(200);
    const started = monotonicMillis();
    c.socket.write('a');
    c.socket.write('b');
    await waitUntil(() => c.text() === 'ab', { message: 'the delayed echo' });
    expect(monotonicMillis() - started).toBeGreaterThanOrEqual(350); // 200 ms out, 200 ms back
  });

  it('a delay that falls to 0 lets no later chunk overtake one still held back', async () => {
    const c = await client();
    proxy.delay(300);
    c.socket.write('a');
    await waitUntil(() => proxy.roundTrips === 1, { message: 'the proxy to take the first chunk' });
    proxy.delay(0);
    c.socket.write('b');
    await waitUntil(() => c.text().length === 2, { message: 'both echoes' });
    expect(c.text()).toBe('ab');
  });

  it('keeps a stream of many small chunks whole and in order through a delay', async () => {
    const c = await client();
    proxy.delay(1);
    const sent: string[] = [];
    for (let i = 0; i < 2_000; i++) {
      const piece = `${i};`;
      sent.push(piece);
      c.socket.write(piece);
      // Each write in its own turn of the event loop, so the proxy sees many separate chunks.
      if (i % 10 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    const whole = sent.join('');
    await waitUntil(() => c.text().length >= whole.length, { message: 'the whole echo' });
    expect(c.text()).toBe(whole);
  });

  it('blackhole: open connections go silent but stay open, new ones are refused until restore', async () => {
    const c = await client();
    proxy.blackhole();
    c.socket.write('lost');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(c.text()).toBe('');
    expect(c.socket.destroyed).toBe(false);

    const refused = connect(proxy.port, '127.0.0.1');
    sockets.push(refused);
    refused.on('error', () => undefined);
    await waitUntil(() => refused.destroyed, { message: 'the proxy to refuse a new connection' });

    proxy.restore();
    const fresh = await client();
    fresh.socket.write('back');
    await waitUntil(() => fresh.text() === 'back', { message: 'the echo on a new connection' });
    expect(c.text()).toBe(''); // the blackholed one stays silent
  });

  it('blackholeOpen: the connections open now go silent for good, new ones pass at once', async () => {
    const c = await client();
    proxy.blackholeOpen({ passCloses: false });
    expect(proxy.silencedConnections).toBe(1);
    c.socket.write('lost');

    const fresh = await client();
    fresh.socket.write('through');
    await waitUntil(() => fresh.text() === 'through', { message: 'the echo on a new connection' });
    expect(proxy.silencedConnections).toBe(1);

    // Even a close does not pass: the proxy keeps the server's side of the silenced one open.
    c.socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(c.text()).toBe('');
    expect(proxy.connections).toBe(2);
    expect(proxy.silencedConnections).toBe(1);
  });
});
