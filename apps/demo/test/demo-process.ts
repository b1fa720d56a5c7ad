import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { tempSqliteFile, tsRegisterPath, type TestDatabase } from '@holdfast/testing';
import { Client } from 'pg';
import { createConnection } from 'mysql2/promise';

const root = resolve(__dirname, '../../..');

export function freePort(): Promise<number> {
  return new Promise((res) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => res(port));
    });
  });
}

export interface DemoProcess {
  child: ChildProcess;
  base: string;
  get(path: string): Promise<{ status: number; body: any }>;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
  stop(): Promise<void>;
  /** Everything the process wrote so far (stdout and stderr, in order), colours removed. */
  output(): string;
}

/**
 * Starts the demo exactly as `npm start` does, on its own port, on `target`: a SQLite file path or
 * a DATABASE_URL (postgres://…, mysql://…).
 */
export async function startDemo(target: string): Promise<DemoProcess> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const isUrl = target.includes('://');
  const child = spawn(process.execPath, ['-r', tsRegisterPath(), 'apps/demo/src/main.ts'], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      DEMO_SQLITE_FILE: isUrl ? undefined : target,
      DATABASE_URL: isUrl ? target : '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const json = async (res: Response) => ({
    status: res.status,
    body: res.headers.get('content-type')?.includes('json') ? await res.json() : await res.text(),
  });
  const demo: DemoProcess = {
    child,
    base,
    get: async (path) => json(await fetch(base + path)),
    post: async (path, body, headers = {}) =>
      json(
        await fetch(base + path, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify(body),
        }),
      ),
    // eslint-disable-next-line no-control-regex
    output: () => output.replace(/\x1b\[[0-9;]*m/g, ''),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
  const deadline = Date.now() + 45_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`demo exited with ${child.exitCode}:\n${output}`);
    try {
      if ((await fetch(`${base}/instance`)).ok) return demo;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  child.kill('SIGKILL');
  throw new Error(`demo did not answer within 45 s:\n${output}`);
}

/** Polls `probe` every 250 ms until it returns a value (not undefined), or fails after `ms`. */
export async function eventually<T>(
  probe: () => Promise<T | undefined>,
  ms: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * A fresh, empty database for the demo on `db`: a SQLite file, or a database created on the test
 * server (HOLDFAST_TEST_PG_URL / HOLDFAST_TEST_MARIADB_URL) and dropped by `drop()`. The demo
 * runs its migrations into it, as on a new deployment.
 */
export async function demoDatabase(db: TestDatabase): Promise<{ target: string; drop(): Promise<void> }> {
  const name = `holdfast_demo_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  if (db === 'sqlite') return { target: tempSqliteFile('demo'), drop: async () => undefined };
  if (db === 'postgres') {
    const server = new URL(process.env.HOLDFAST_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
    const admin = async (sql: string) => {
      const client = new Client({ connectionString: server.toString() });
      await client.connect();
      try {
        await client.query(sql);
      } finally {
        await client.end();
      }
    };
    await admin(`CREATE DATABASE ${name}`);
    const target = new URL(server.toString());
    target.pathname = `/${name}`;
    return { target: target.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
  }
  const server = new URL(process.env.HOLDFAST_TEST_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306/test');
  const admin = async (sql: string) => {
    const connection = await createConnection(server.toString());
    try {
      await connection.query(sql);
    } finally {
      await connection.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const target = new URL(server.toString());
  target.pathname = `/${name}`;
  return { target: target.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name}`) };
}
