import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { TestDatabase } from '@holdfast/testing';

const run = promisify(execFile);

const ROOT = resolve(__dirname, '../../..');
const SOURCES = resolve(__dirname, '../java');
const JARS = [
  '/usr/share/java/mariadb-java-client.jar',
  '/usr/share/java/postgresql.jar',
  // Jackson, as the Java failover library reads its rows (FailoverReader).
  '/usr/share/java/jackson-databind.jar',
  '/usr/share/java/jackson-core.jar',
  '/usr/share/java/jackson-annotations.jar',
];
/** Small, quick JVMs: six of them share two cores with the Node processes. */
const JVM_FLAGS = [
  '-Duser.timezone=UTC',
  '-XX:+UseSerialGC',
  '-XX:TieredStopAtLevel=1',
  '-Xss512k',
  '-Xmx96m',
];

/** The Java programs' classpath (JDBC drivers, Jackson): HOLDFAST_JDBC_CLASSPATH, or the jars test/interop/setup.sh installs. */
export function jdbcClasspath(): string {
  const fromEnv = process.env.HOLDFAST_JDBC_CLASSPATH;
  if (fromEnv) return fromEnv;
  const missing = JARS.filter((jar) => !existsSync(jar));
  if (missing.length) {
    throw new Error(
      `Java jar(s) missing: ${missing.join(', ')}. Run test/interop/setup.sh (apt-get installs ` +
        'libmariadb-java, libpostgresql-jdbc-java and libjackson2-databind-java), or set HOLDFAST_JDBC_CLASSPATH.',
    );
  }
  return JARS.join(':');
}

function javaSources(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.java')) found.push(path);
    }
  };
  walk(SOURCES);
  return found.sort();
}

let compiled: Promise<string> | undefined;

/**
 * Compiles test/interop/java once per set of sources into .tmp/interop-java/<hash> (plain javac,
 * the drivers on the classpath) and resolves with the classpath to run the programs with.
 */
export function compileJava(): Promise<string> {
  compiled ??= (async () => {
    const classpath = jdbcClasspath();
    const sources = javaSources();
    const hash = createHash('sha256');
    for (const file of sources) hash.update(file).update(readFileSync(file));
    const base = join(ROOT, '.tmp', 'interop-java');
    const target = join(base, hash.digest('hex').slice(0, 16));
    if (!existsSync(join(target, 'holdfast', 'interop', 'SimbaContender.class'))) {
      mkdirSync(base, { recursive: true });
      const staging = mkdtempSync(join(base, 'build-'));
      try {
        await run('javac', ['-encoding', 'UTF-8', '-d', staging, '-cp', classpath, ...sources]);
      } catch (error) {
        rmSync(staging, { recursive: true, force: true });
        const { stderr } = error as { stderr?: string };
        throw new Error(`javac failed:\n${stderr ?? (error as Error).message}`);
      }
      try {
        renameSync(staging, target);
        // Classes of older sources are of no use any more.
        for (const old of readdirSync(base)) {
          if (/^[0-9a-f]{16}$/.test(old) && join(base, old) !== target)
            rmSync(join(base, old), { recursive: true, force: true });
        }
      } catch {
        // Another test file compiled the same sources first.
        rmSync(staging, { recursive: true, force: true });
      }
    }
    return `${target}:${classpath}`;
  })();
  return compiled;
}

/** Runs a Java program to completion and resolves with its stdout. */
export async function runJava(main: string, args: string[], timeoutMs = 60_000): Promise<string> {
  const classpath = await compileJava();
  try {
    const { stdout } = await run(
      'java',
      [...JVM_FLAGS, '-cp', classpath, `holdfast.interop.${main}`, ...args],
      {
        timeout: timeoutMs,
        maxBuffer: 16 * 1024 * 1024,
        encoding: 'utf8',
      },
    );
    return stdout;
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new Error(
      `java ${main} ${args.join(' ')} failed: ${(error as Error).message}\n${stderr ?? ''}${stdout ?? ''}`,
    );
  }
}

/** Starts a long-running Java program with piped stdio (end its stdin to stop it). */
export async function spawnJava(main: string, args: string[]): Promise<ChildProcessWithoutNullStreams> {
  const classpath = await compileJava();
  return spawn('java', [...JVM_FLAGS, '-cp', classpath, `holdfast.interop.${main}`, ...args]);
}

/** The JDBC URL of a test database (HOLDFAST_TEST_PG_URL / HOLDFAST_TEST_MARIADB_URL, as the TypeORM tests use). */
export function jdbcUrl(db: Exclude<TestDatabase, 'sqlite'>): string {
  const raw =
    db === 'postgres'
      ? (process.env.HOLDFAST_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test')
      : (process.env.HOLDFAST_TEST_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306/test');
  const url = new URL(raw);
  const params = new URLSearchParams();
  if (url.username) params.set('user', decodeURIComponent(url.username));
  if (url.password) params.set('password', decodeURIComponent(url.password));
  // Behind PgBouncer in transaction pooling (SPEC section 7) a server-side prepared statement
  // may be gone by the next transaction: the driver must not name statements.
  if (db === 'postgres') params.set('prepareThreshold', '0');
  const scheme = db === 'postgres' ? 'postgresql' : 'mariadb';
  return `jdbc:${scheme}://${url.hostname}:${url.port || (db === 'postgres' ? 5432 : 3306)}${url.pathname}?${params}`;
}
