/**
 * A live Apache ActiveMQ Classic broker (Debian's `activemq` package, /usr/share/activemq) run by a
 * test as a child JVM, never as the system service: its own activemq.xml, log4j.properties and
 * data directory in a temporary folder, one openwire connector on 127.0.0.1 at a port the test
 * gives (no other connector, no JMX, no web console). Every line it logs is kept with the test's
 * monotonic time of arrival (CLOCK_MONOTONIC, which the Holdfast workers' `at` also reads).
 */
import { monotonicMillis } from '@holdfast/core/kit';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const ACTIVEMQ_HOME = process.env.HOLDFAST_ACTIVEMQ_HOME ?? '/usr/share/activemq';
const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
const JDBC_JARS = ['/usr/share/java/postgresql.jar', '/usr/share/java/mariadb-java-client.jar'];

/** The store the broker locks: KahaDB on a directory, or a JDBC store on a Holdfast test database. */
export type BrokerStore =
  | { kind: 'kahadb'; directory: string }
  | {
      kind: 'jdbc';
      /** A JDBC URL (test/interop/support/java.ts jdbcUrl). */
      url: string;
      db: 'postgres' | 'mariadb';
      /** ActiveMQ's `statements.tablePrefix`: its tables are `<prefix>ACTIVEMQ_LOCK`, … */
      tablePrefix: string;
      /** 'lease': lease-database-locker; 'row': the default database-locker (SELECT … FOR UPDATE). */
      locker: 'lease' | 'row';
      /** lease-database-locker's maxAllowableDiffFromDBTime (ms; 0, ActiveMQ's default, measures nothing). */
      maxAllowableDiffFromDBTime?: number;
    };

export interface BrokerOptions {
  /** brokerName, and so the lease holder id ActiveMQ writes to BROKER_NAME. */
  name: string;
  /** The openwire connector's port on 127.0.0.1 (it listens only while the broker is master). */
  port: number;
  store: BrokerStore;
  /** The locker's lockAcquireSleepInterval (ms): a standby's retry interval, and the lease. */
  lockAcquireSleepInterval: number;
  /** The store's lockKeepAlivePeriod (ms). */
  lockKeepAlivePeriod: number;
  /** libfaketime's FAKETIME for the JVM (e.g. '+10s'): its wall clock off by that much. */
  faketime?: string;
}

export interface BrokerLine {
  at: number;
  text: string;
}

/**
 * A broker is master from the moment its locker says so (the JDBC lockers log it when they take
 * the lease or the row: `becoming master …`, `Becoming the master …`), or, for KahaDB's
 * shared-file-locker, which logs nothing then, from `… is starting` (logged once its store, and
 * so its lock, is started).
 */
export const MASTER_LINE =
  /becoming master with lease expiry|Becoming the master on dataSource|\) is starting$/;

/** Whether the broker package and a JVM are installed (CI installs them: .ci/run). */
export function activemqInstalled(): boolean {
  return existsSync(join(ACTIVEMQ_HOME, 'bin', 'activemq.jar'));
}

function storeXml(options: BrokerOptions): { beans: string; adapter: string } {
  const { store } = options;
  if (store.kind === 'kahadb') {
    return {
      beans: '',
      adapter:
        `<kahaDB directory="${store.directory}" lockKeepAlivePeriod="${options.lockKeepAlivePeriod}">` +
        `<locker><shared-file-locker lockAcquireSleepInterval="${options.lockAcquireSleepInterval}"/></locker>` +
        `</kahaDB>`,
    };
  }
  const dataSource =
    store.db === 'postgres' ? 'org.postgresql.ds.PGSimpleDataSource' : 'org.mariadb.jdbc.MariaDbDataSource';
  const locker =
    store.locker === 'lease'
      ? `<lease-database-locker lockAcquireSleepInterval="${options.lockAcquireSleepInterval}" ` +
        `maxAllowableDiffFromDBTime="${store.maxAllowableDiffFromDBTime ?? 0}"/>`
      : `<database-locker lockAcquireSleepInterval="${options.lockAcquireSleepInterval}"/>`;
  const adapter = store.db === 'mariadb' ? '<adapter><mysql-jdbc-adapter/></adapter>' : '';
  return {
    beans:
      `<bean id="store-ds" xmlns="http://www.springframework.org/schema/beans" class="${dataSource}">` +
      `<property name="url" value="${store.url.replace(/&/g, '&amp;')}"/></bean>`,
    adapter:
      `<jdbcPersistenceAdapter dataSource="#store-ds" createTablesOnStartup="true" ` +
      `lockKeepAlivePeriod="${options.lockKeepAlivePeriod}">` +
      `${adapter}<statements><statements tablePrefix="${store.tablePrefix}"/></statements>` +
      `<locker>${locker}</locker></jdbcPersistenceAdapter>`,
  };
}

/**
 * One broker process. `start()` launches it; `lines` fills as it logs. A broker is master from
 * its MASTER_LINE until it is killed or logs `… is shutting down` (a broker whose keep-alive
 * fails gives up being master and restarts as a slave in the same JVM).
 */
export class ActiveMqBroker {
  readonly lines: BrokerLine[] = [];
  readonly base: string;
  child?: ChildProcessWithoutNullStreams;
  killedAt?: number;

  constructor(readonly options: BrokerOptions) {
    this.base = mkdtempSync(join(tmpdir(), `activemq-${options.name}-`));
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): this {
    const conf = join(this.base, 'conf');
    const data = join(this.base, 'data');
    const lib = join(this.base, 'lib');
    for (const dir of [conf, data, lib]) mkdirSync(dir, { recursive: true });
    // ${activemq.base}/lib is on the broker's classpath: the JDBC drivers go there.
    for (const jar of JDBC_JARS) {
      const link = join(lib, jar.split('/').pop() as string);
      if (existsSync(jar) && !existsSync(link)) symlinkSync(jar, link);
    }
    const { beans, adapter } = storeXml(this.options);
    writeFileSync(
      join(conf, 'activemq.xml'),
      `<beans xmlns="http://www.springframework.org/schema/beans" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
  xsi:schemaLocation="http://www.springframework.org/schema/beans http://www.springframework.org/schema/beans/spring-beans-2.0.xsd
  http://activemq.apache.org/schema/core http://activemq.apache.org/schema/core/activemq-core.xsd">
  ${beans}
  <broker xmlns="http://activemq.apache.org/schema/core" brokerName="${this.options.name}" useJmx="false"
          persistent="true" advisorySupport="false" schedulerSupport="false" dataDirectory="${data}">
    <persistenceAdapter>${adapter}</persistenceAdapter>
    <transportConnectors>
      <transportConnector name="openwire" uri="tcp://127.0.0.1:${this.options.port}"/>
    </transportConnectors>
  </broker>
</beans>
`,
    );
    // ActiveMQ 5.17 on Debian logs through log4j 1.2 (slf4j-log4j12); DEBUG for the lockers.
    writeFileSync(
      join(conf, 'log4j.properties'),
      [
        'log4j.rootLogger=INFO, stdout',
        'log4j.appender.stdout=org.apache.log4j.ConsoleAppender',
        'log4j.appender.stdout.layout=org.apache.log4j.PatternLayout',
        'log4j.appender.stdout.layout.ConversionPattern=%d{ISO8601} %-5p %c{1} | %m%n',
        'log4j.logger.org.springframework=WARN',
        'log4j.logger.org.apache.xbean=WARN',
        'log4j.logger.org.apache.activemq.store.jdbc.LeaseDatabaseLocker=DEBUG',
        'log4j.logger.org.apache.activemq.store.jdbc.DefaultDatabaseLocker=DEBUG',
        '',
      ].join('\n'),
    );
    const env: NodeJS.ProcessEnv = { ...process.env };
    if (this.options.faketime) {
      env.LD_PRELOAD = LIBFAKETIME;
      env.FAKETIME = this.options.faketime;
      // The JVM's timers and nanoTime stay real: only the wall clock (currentTimeMillis) is off.
      env.FAKETIME_DONT_FAKE_MONOTONIC = '1';
    }
    const child = spawn(
      'java',
      [
        '-Xmx128m',
        '-XX:+UseSerialGC',
        '-XX:TieredStopAtLevel=1',
        '-Duser.timezone=UTC',
        '--add-opens',
        'java.base/java.lang=ALL-UNNAMED',
        `-Dactivemq.classpath=${conf}`,
        `-Dactivemq.home=${ACTIVEMQ_HOME}`,
        `-Dactivemq.base=${this.base}`,
        `-Dactivemq.conf=${conf}`,
        `-Dactivemq.data=${data}`,
        '-jar',
        join(ACTIVEMQ_HOME, 'bin', 'activemq.jar'),
        'start',
        `xbean:file:${join(conf, 'activemq.xml')}`,
      ],
      { env, cwd: this.base },
    );
    this.child = child;
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (text) => {
        this.lines.push({ at: monotonicMillis(), text });
        if (process.env.HOLDFAST_TEST_VERBOSE) console.log(`[broker ${this.options.name}] ${text}`);
      });
    }
    return this;
  }

  get exited(): boolean {
    return !this.child || this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** The first logged line matching `pattern` at or after `after` (monotonic ms); waits for it. */
  async line(pattern: RegExp, timeoutMs = 30_000, after = -Infinity): Promise<BrokerLine> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.lines.find((l) => l.at >= after && pattern.test(l.text));
      if (found) return found;
      if (this.exited)
        throw new Error(`broker ${this.options.name} exited before logging ${pattern}\n${this.log()}`);
      if (Date.now() > deadline) {
        throw new Error(
          `broker ${this.options.name}: no line ${pattern} within ${timeoutMs} ms\n${this.log()}`,
        );
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Resolves with the monotonic time the broker became master (its MASTER_LINE). */
  master(timeoutMs = 30_000, after = -Infinity): Promise<number> {
    return this.line(MASTER_LINE, timeoutMs, after).then((l) => l.at);
  }

  /** Whether it has been master (since `after`). */
  wasMaster(after = -Infinity): boolean {
    return this.lines.some((l) => l.at >= after && MASTER_LINE.test(l.text));
  }

  /** Its mastership terms: from a MASTER_LINE to `… is shutting down` or the kill. */
  terms(now = monotonicMillis()): { name: string; from: number; to: number }[] {
    const result: { name: string; from: number; to: number }[] = [];
    let from: number | undefined;
    for (const { at, text } of this.lines) {
      if (MASTER_LINE.test(text) && from === undefined) from = at;
      if (/\) is shutting down$/.test(text) && from !== undefined) {
        result.push({ name: this.options.name, from, to: at });
        from = undefined;
      }
    }
    if (from !== undefined) result.push({ name: this.options.name, from, to: this.killedAt ?? now });
    return result;
  }

  /** SIGKILL, as a crash: returns the monotonic time of the kill. */
  async kill(): Promise<number> {
    const child = this.child;
    const at = monotonicMillis();
    if (!child || this.exited) return at;
    this.killedAt = at;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    return at;
  }

  log(): string {
    return this.lines.map((l) => l.text).join('\n');
  }

  async destroy(): Promise<void> {
    await this.kill();
    rmSync(this.base, { recursive: true, force: true });
  }
}
