import { DataSource, type DataSourceOptions } from 'typeorm';
import { dialectOfDriver, sqlDialect } from '../dialect/dialects';
import { InvalidOptionsError } from '../errors/holdfast.error';
import { parseDuration, type Duration } from '../time/duration';
import { closeSockets, poolConnections } from './connection-bound';

/**
 * Holdfast's own connections on a DataSource (#31, #43): its time-critical statements never wait
 * in the pool's queue behind the application's queries, and an instance opens them all at
 * startup, within what the server allows, or is refused (ConnectionBudget). `false` turns them
 * off: the modules then share the application's pool, as before #31.
 */
export interface CoordinationPoolOptions {
  /**
   * Connections of each coordination lane (default 1; see ConnectionBudget for the lanes: the lease
   * statements, each delivering inbox's claims and completions, each `database` lock).
   */
  size?: number;
  /**
   * Connection options that replace the DataSource's for Holdfast's connections only: another host,
   * port, user or database name, e.g. a PgBouncer database entry with a pool of its own so that the
   * application's load on PgBouncer's server connections cannot delay Holdfast either.
   */
  connection?: Partial<Record<string, unknown>>;
  /**
   * What an instance does when the server has no room for Holdfast's connections at startup:
   * `'fail'` (default) stops the startup at once with ConnectionBudgetError; `'wait'` looks again
   * every few seconds, up to `serverFullWait`, then fails the same way (a rolling deploy whose old
   * instances are still leaving).
   */
  whenServerFull?: 'fail' | 'wait';
  /** With `whenServerFull: 'wait'`, how long to wait for room (default '60s'). */
  serverFullWait?: Duration;
}

/** The DataSource option keys a coordination pool never takes from the application's. */
const LEFT_OUT = [
  'entities',
  'migrations',
  'subscribers',
  'synchronize',
  'migrationsRun',
  'dropSchema',
  'cache',
];

/** How long application shutdown waits for a coordination pool's connections to close. */
const CLOSE_WAIT_MS = 5_000;

/** How long each connection then has for its goodbye before its socket is destroyed (#43). */
const GOODBYE_WAIT_MS = 1_000;

const poolsByDataSource = new WeakMap<DataSource, CoordinationPool>();

const configured = new WeakMap<DataSource, CoordinationPoolOptions | false>();

/**
 * Sets Holdfast's own connections on `dataSource` for every module on it (a module's own
 * `coordinationPool` option, where it has one, wins): `{ size, connection, whenServerFull,
 * serverFullWait }` or `false` (the modules share the DataSource's pool, as before #31). Call it
 * before the application starts, e.g. in a @nestjs/typeorm `dataSourceFactory`. Throws
 * InvalidOptionsError for a bad option.
 */
export function configureCoordinationPool(
  dataSource: DataSource,
  option: CoordinationPoolOptions | false,
): void {
  validateCoordinationPool('configureCoordinationPool', option);
  configured.set(dataSource, option);
}

/** What `configureCoordinationPool` set for `dataSource`, if anything. */
export function configuredCoordinationPool(
  dataSource: DataSource,
): CoordinationPoolOptions | false | undefined {
  return configured.get(dataSource);
}

/** Validates a `coordinationPool` option; throws InvalidOptionsError naming what is wrong. */
export function validateCoordinationPool(
  module: string,
  option: CoordinationPoolOptions | false | undefined,
): void {
  if (option === undefined || option === false) return;
  const problems: string[] = [];
  if (typeof option !== 'object' || option === null) {
    problems.push(
      `coordinationPool must be false or { size?, connection?, whenServerFull?, serverFullWait? }, got ${JSON.stringify(option)}`,
    );
  } else {
    if (option.size !== undefined && !(Number.isInteger(option.size) && option.size >= 1)) {
      problems.push(
        `coordinationPool.size must be an integer of at least 1, got ${JSON.stringify(option.size)}`,
      );
    }
    if (
      option.connection !== undefined &&
      (typeof option.connection !== 'object' ||
        option.connection === null ||
        Array.isArray(option.connection))
    ) {
      problems.push('coordinationPool.connection must be an object of DataSource connection options');
    }
    if (option.whenServerFull !== undefined && !['fail', 'wait'].includes(option.whenServerFull)) {
      problems.push(
        `coordinationPool.whenServerFull must be 'fail' or 'wait', got ${JSON.stringify(option.whenServerFull)}`,
      );
    }
    if (option.serverFullWait !== undefined) {
      try {
        parseDuration(option.serverFullWait, 'coordinationPool.serverFullWait');
      } catch (error) {
        problems.push((error as Error).message);
      }
    }
  }
  if (problems.length) throw new InvalidOptionsError(module, problems);
}

/**
 * One coordination lane: a second TypeORM DataSource opened from the application's options (same
 * driver, server, credentials, TLS, time zone) with a pool of `size` connections, no entities and
 * no synchronization, shared by the modules whose statements go to that lane. Created at once (so
 * a SqlClient can be built synchronously); its connections are opened all at once by the
 * process's ConnectionBudget ({@link open}) and then kept open (a connection a bound destroyed is
 * replaced on the next checkout); closed when its last module shuts down or the application's
 * DataSource is destroyed.
 */
export class CoordinationPool {
  readonly dataSource: DataSource;
  private connecting?: Promise<void>;
  private closing = false;
  private users = 0;

  constructor(
    readonly application: DataSource,
    /** The lane's key (`lease`, `inbox:<table>`, `held:<lock>`). */
    readonly lane: string,
    /** What the lane is for, as errors and the README name it. */
    readonly what: string,
    readonly size: number,
    /** Opens the lane within the process's budget (ConnectionBudget.admit). */
    private readonly admit: () => Promise<void>,
    connection?: Partial<Record<string, unknown>>,
  ) {
    this.dataSource = new DataSource(coordinationOptions(application.options, size, connection));
    poolsByDataSource.set(this.dataSource, this);
  }

  /** The pool behind a coordination client's DataSource, if it is one. */
  static of(dataSource: DataSource): CoordinationPool | undefined {
    return poolsByDataSource.get(dataSource);
  }

  /** Connections the pool opens at most (all of them, at startup). */
  get maxConnections(): number {
    return this.size;
  }

  get isOpen(): boolean {
    return this.dataSource.isInitialized;
  }

  get isClosed(): boolean {
    return this.closing;
  }

  /** A module uses the lane until it calls {@link release}. */
  use(): void {
    this.users++;
  }

  /** A module is done with the lane; the last one closes it. */
  async release(): Promise<void> {
    this.users = Math.max(0, this.users - 1);
    if (this.users === 0) await this.close();
  }

  /** Opens the lane (and every other lane of the process not open yet), within the budget. */
  open(): Promise<void> {
    if (this.closing) return Promise.reject(new Error(`Holdfast coordination lane '${this.lane}' closed`));
    if (this.isOpen) return Promise.resolve();
    return this.admit();
  }

  /**
   * (ConnectionBudget) Connects the DataSource and opens each of its `size` connections, which
   * then stay open. A failure (the server full) leaves nothing open: see {@link disconnect}.
   */
  connect(): Promise<void> {
    if (this.closing) return Promise.reject(new Error(`Holdfast coordination lane '${this.lane}' closed`));
    if (!this.connecting) {
      this.connecting = (async () => {
        if (!this.dataSource.isInitialized) await this.dataSource.initialize();
        const runners = Array.from({ length: this.size }, () => this.dataSource.createQueryRunner());
        const connected = await Promise.allSettled(runners.map((r) => r.connect()));
        await Promise.all(runners.map((r) => r.release().catch(() => undefined)));
        const failed = connected.find((c): c is PromiseRejectedResult => c.status === 'rejected');
        if (failed) throw failed.reason;
      })().catch(async (error: unknown) => {
        this.connecting = undefined;
        await this.disconnect();
        throw error;
      });
    }
    return this.connecting;
  }

  /** (ConnectionBudget) Closes what {@link connect} opened, so that a refused instance keeps nothing. */
  async disconnect(): Promise<void> {
    this.connecting = undefined;
    if (this.dataSource.isInitialized) await this.dataSource.destroy().catch(() => undefined);
  }

  /**
   * Closes the lane's connections (its modules gave back its leases before). pg-pool's end waits
   * for connections still checked out; a lock connection its locker destroys in the same shutdown
   * phase ends that wait, and past CLOSE_WAIT_MS shutdown goes on without it. Sockets still open
   * GOODBYE_WAIT_MS after that (a silent path never answers a goodbye) are destroyed, so none
   * keeps the process alive.
   */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    await this.connecting?.catch(() => undefined);
    if (!this.dataSource.isInitialized) return;
    const connections = poolConnections(this.dataSource);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.dataSource.destroy().catch(() => undefined),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, CLOSE_WAIT_MS);
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
    await closeSockets(connections, GOODBYE_WAIT_MS);
  }
}

/** The application's DataSource options for a lane of `size` connections of Holdfast's own. */
function coordinationOptions(
  application: DataSourceOptions,
  size: number,
  connection: Partial<Record<string, unknown>> = {},
): DataSourceOptions {
  const options: Record<string, unknown> = { ...application, ...connection };
  for (const key of LEFT_OUT) delete options[key];
  const extra = { ...((application as { extra?: Record<string, unknown> }).extra ?? {}) };
  // pg reads `max` and `min`, mysql2 `connectionLimit` and `maxIdle`; TypeORM lets `extra` win over poolSize.
  const dialect = dialectOfDriver(String(application.type));
  Object.assign(
    extra,
    dialect ? sqlDialect(dialect).poolSizeOptions(size) : { connectionLimit: size, maxIdle: size },
  );
  return {
    ...options,
    poolSize: size,
    extra,
    entities: [],
    migrations: [],
    subscribers: [],
    synchronize: false,
    migrationsRun: false,
    dropSchema: false,
  } as unknown as DataSourceOptions;
}
