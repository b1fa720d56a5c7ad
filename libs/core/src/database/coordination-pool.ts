import { DataSource, type DataSourceOptions } from 'typeorm';
import { dialectOfDriver, sqlDialect } from '../dialect/dialects';
import { InvalidOptionsError } from '../errors/holdfast.error';
import { closeSockets, poolConnections } from './connection-bound';

/**
 * A module's own small pool for its time-critical statements (Simba's ticks and polls, the
 * lockers' leases and keep-alives, the inbox's claims, heartbeats and completions), so that they
 * never wait in the pool's queue behind the application's queries (#31). `false` turns it off:
 * the module then shares the application's pool, as before.
 */
export interface CoordinationPoolOptions {
  /**
   * Connections of the module's own pool. Default: what the module declares it holds at once
   * (its pool need, see declarePoolNeed) plus one for its occasional statements (schema checks,
   * clock reads, management reads), which grows as the module declares more (a locker per lock).
   */
  size?: number;
  /**
   * Connection options that replace the DataSource's for this pool only: another host, port,
   * user or database name, e.g. a PgBouncer database entry with a pool of its own so that the
   * application's load on PgBouncer's server connections cannot delay Holdfast either.
   */
  connection?: Partial<Record<string, unknown>>;
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
 * Sets the coordination pools of every Holdfast module on `dataSource` (a module's own
 * `coordinationPool` option, where it has one, wins): `{ size, connection }` or `false` (the
 * modules share the DataSource's pool, as before #31). Call it before the application starts,
 * e.g. in a @nestjs/typeorm `dataSourceFactory`. Throws InvalidOptionsError for a bad option.
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
    problems.push(`coordinationPool must be false or { size?, connection? }, got ${JSON.stringify(option)}`);
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
  }
  if (problems.length) throw new InvalidOptionsError(module, problems);
}

/**
 * A second TypeORM DataSource opened from the application's options (same driver, server,
 * credentials, TLS, time zone) with a pool of a few connections, no entities and no
 * synchronization. Created at once (so a SqlClient can be built synchronously), connected on
 * first use ({@link open}), closed by its module at application shutdown ({@link close}).
 */
export class CoordinationPool {
  readonly dataSource: DataSource;
  private opening?: Promise<void>;
  private closing = false;
  private size: number;

  constructor(
    readonly application: DataSource,
    private readonly options: CoordinationPoolOptions = {},
    /** Connections before any need is declared: the module's startup statements run one at a time. */
    initialSize = 1,
  ) {
    this.size = options.size ?? initialSize;
    this.dataSource = new DataSource(coordinationOptions(application.options, this.size, options.connection));
    poolsByDataSource.set(this.dataSource, this);
    closeWithApplication(application, this);
  }

  /** The pool behind a coordination client's DataSource, if it is one. */
  static of(dataSource: DataSource): CoordinationPool | undefined {
    return poolsByDataSource.get(dataSource);
  }

  /** True when the size follows the module's declared needs (no `size` configured). */
  get automatic(): boolean {
    return this.options.size === undefined;
  }

  /** Connections the pool opens at most. */
  get maxConnections(): number {
    return this.size;
  }

  get isOpen(): boolean {
    return this.dataSource.isInitialized;
  }

  /** Connects the pool once; a failed attempt (database down at startup) is tried again next time. */
  open(): Promise<void> {
    if (this.closing) return Promise.reject(new Error('Holdfast coordination pool closed'));
    if (!this.opening) {
      this.opening = this.dataSource.initialize().then(
        () => setDriverPoolSize(this.dataSource, this.size),
        (error: unknown) => {
          this.opening = undefined;
          throw error;
        },
      );
    }
    return this.opening;
  }

  /**
   * Sets the pool's size to `connections` (an automatic pool only): the declared needs of the
   * module plus one. Growing takes effect for the next checkout; nothing is closed by shrinking.
   */
  fitTo(connections: number): void {
    if (!this.automatic || connections <= this.size) return;
    this.size = connections;
    setDriverPoolSize(this.dataSource, connections);
  }

  /**
   * Closes the pool's connections (the module gave back its leases before). pg-pool's end waits
   * for connections still checked out; a lock connection its locker destroys in the same shutdown
   * phase ends that wait, and past CLOSE_WAIT_MS shutdown goes on without it. Sockets still open
   * GOODBYE_WAIT_MS after that (a silent path never answers a goodbye) are destroyed, so none
   * keeps the process alive.
   */
  async close(): Promise<void> {
    this.closing = true;
    const opening = this.opening;
    if (!opening) return;
    await opening.catch(() => undefined);
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

const poolsOfApplication = new WeakMap<DataSource, Set<CoordinationPool>>();

/**
 * The coordination pools close with the application's DataSource at the latest: an application
 * whose startup failed never runs the modules' shutdown hooks, but it does destroy its DataSource
 * (TypeOrmModule at shutdown, or the application itself), and a pool left open would keep the
 * process alive and hold connections on the server.
 */
function closeWithApplication(application: DataSource, pool: CoordinationPool): void {
  let pools = poolsOfApplication.get(application);
  if (!pools) {
    poolsOfApplication.set(application, (pools = new Set()));
    const all = pools;
    const destroy = application.destroy.bind(application);
    application.destroy = async () => {
      await Promise.all([...all].map((p) => p.close()));
      return destroy();
    };
  }
  pools.add(pool);
}

/** The application's DataSource options for a pool of `size` connections of Holdfast's own. */
function coordinationOptions(
  application: DataSourceOptions,
  size: number,
  connection: Partial<Record<string, unknown>> = {},
): DataSourceOptions {
  const options: Record<string, unknown> = { ...application, ...connection };
  for (const key of LEFT_OUT) delete options[key];
  const extra = { ...((application as { extra?: Record<string, unknown> }).extra ?? {}) };
  // pg reads `max`, mysql2 `connectionLimit` and `maxIdle`; TypeORM lets `extra` win over poolSize.
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

/**
 * Both drivers read their pool's limit at every checkout (pg-pool `options.max`, mysql2
 * `config.connectionLimit`), so a pool that a module's later declarations enlarge needs no reopening.
 */
function setDriverPoolSize(dataSource: DataSource, size: number): void {
  if (!dataSource.isInitialized) return;
  const driver = dataSource.driver as unknown as {
    master?: { options?: { max?: number } };
    pool?: { config?: { connectionLimit?: number; maxIdle?: number } };
  };
  if (driver.master?.options) driver.master.options.max = size;
  if (driver.pool?.config) {
    driver.pool.config.connectionLimit = size;
    driver.pool.config.maxIdle = size;
  }
}
