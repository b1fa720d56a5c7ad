import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  describeConnectionLimits,
  freeConnections,
  readConnectionLimits,
  type ServerConnectionLimits,
} from './connection-limits';
import type { SqlDialect } from '../dialect/sql-dialect';
import { ConnectionBudgetError, type ConnectionShare } from '../errors/holdfast.error';
import { parseDuration } from '../time/duration';
import { monotonicMillis } from '../time/monotonic';
import { configuredCoordinationPool, CoordinationPool } from './coordination-pool';
import { isTooManyConnectionsError } from './sql-errors';

/**
 * A coordination lane: the statements of one kind that share a connection of Holdfast's own.
 * Statements on one lane wait only for each other, never for the application's queries.
 */
export interface CoordinationLane {
  readonly key: string;
  /** What its statements are, as the budget's error and the README name them. */
  readonly what: string;
  /** Its connections, for a lane opened on demand (HoldfastDatabase.openLaneOnDemand); else `coordinationPool.size`, 1 by default. */
  readonly size?: number;
}

/**
 * The lease statements of every module on the DataSource: Simba's rounds, the lease-database
 * locker's acquire/renew/release, `@ScheduledLock`'s rows, the inbox's heartbeats. Each is one
 * short round trip within its own bound, so one connection serves them all: a statement waits at
 * most for the few others queued before it, never for the application.
 */
export const LEASE_LANE: CoordinationLane = {
  key: 'lease',
  what: 'lease statements (Simba, the lease-database locker, @ScheduledLock, inbox heartbeats)',
};

/** How long admission waits between looks at the server with `whenServerFull: 'wait'` (plus up to 1 s at random). */
const WAIT_STEP_MS = 2_000;
/** A connection admission leaves free: the next instance can still connect, and be told why it must not stay. */
const HEADROOM = 1;
/**
 * What an admission that must not wait (a lane on demand) leaves free: a tenth of the server's
 * connections, at least HEADROOM, so that a running instance's extra lanes never take the room
 * that a newcomer of a rolling deploy needs to boot.
 */
const onDemandHeadroom = (limits: ServerConnectionLimits) =>
  Math.max(HEADROOM, Math.ceil(limits.maxConnections / 10));

const budgets = new WeakMap<DataSource, ConnectionBudget>();

/** How a module opens and closes a connection of its own that the budget counts (see `dedicate`). */
export interface DedicatedConnection {
  /**
   * Opens it, during the admission, once the lanes are open: the server's refusal of it
   * (isTooManyConnectionsError) refuses the instance; any other failure is the module's to report
   * and retry (the admission goes on).
   */
  open(): Promise<void>;
  /** Closes what `open` opened: another part of the admission was refused. */
  close(): Promise<void>;
}

interface Dedicated {
  share: ConnectionShare;
  connection?: DedicatedConnection;
  admitted: boolean;
}

/**
 * Everything Holdfast connects of its own on one application DataSource in this process: the
 * coordination lanes its modules use (each a small pool, one connection by default) and its
 * dedicated connections (the inbox's LISTEN). It is opened all at once, at the first statement on
 * any lane (at the latest when the application boots: every module waits for it in
 * onApplicationBootstrap), and only if the server has room for all of it, counted against
 * `max_connections` minus the reserved connections minus what is in use, one left over; otherwise
 * the startup fails with ConnectionBudgetError, which names the figures, or waits for room
 * (`whenServerFull: 'wait'`). Its connections then stay open for the life of the application, so
 * an instance that booted never needs a connection a newcomer could take from it.
 * A lane a module adds after the first admission is admitted on its own, the same way.
 */
export class ConnectionBudget {
  private readonly logger = new Logger('HoldfastConnections');
  private readonly lanes = new Map<string, CoordinationPool>();
  private readonly dedicated = new Map<string, Dedicated>();
  private admission: Promise<void> = Promise.resolve();

  private constructor(
    readonly application: DataSource,
    private readonly dialect: SqlDialect,
  ) {
    closeWithApplication(application, this);
  }

  /** The budget of `application` in this process. */
  static of(application: DataSource, dialect: SqlDialect): ConnectionBudget {
    let budget = budgets.get(application);
    if (!budget) budgets.set(application, (budget = new ConnectionBudget(application, dialect)));
    return budget;
  }

  /** The budget `application` has in this process, if any module made one. */
  static existing(application: DataSource): ConnectionBudget | undefined {
    return budgets.get(application);
  }

  /** The lane's pool (created on first use; a closed one is replaced), counted as used once more. */
  lane(lane: CoordinationLane): CoordinationPool {
    let pool = this.lanes.get(lane.key);
    if (!pool || pool.isClosed) {
      const option = configuredCoordinationPool(this.application) || {};
      pool = new CoordinationPool(
        this.application,
        lane.key,
        lane.what,
        lane.size ?? option.size ?? 1,
        () => this.admit(),
        option.connection,
      );
      this.lanes.set(lane.key, pool);
    }
    pool.use();
    return pool;
  }

  /**
   * A connection a module opens itself (the inbox's LISTEN), counted in the budget, and opened in
   * the admission by `connection` when given, so that no newcomer can take its place between the
   * admission and the module's start.
   */
  dedicate(key: string, what: string, connection?: DedicatedConnection): void {
    const known = this.dedicated.get(key);
    this.dedicated.set(key, {
      share: { what, connections: 1 },
      connection,
      admitted: known?.admitted ?? false,
    });
  }

  /** A dedicated connection the module closed for good (its application shut down). */
  forget(key: string): void {
    this.dedicated.delete(key);
  }

  /** Every share of the budget: the lanes (open or not) and the dedicated connections. */
  get shares(): ConnectionShare[] {
    return [
      ...[...this.lanes.values()]
        .filter((p) => !p.isClosed)
        .map((p) => ({ what: p.what, connections: p.maxConnections })),
      ...[...this.dedicated.values()].map((d) => d.share),
    ];
  }

  /** Connections of the whole budget. */
  get total(): number {
    return this.shares.reduce((sum, s) => sum + s.connections, 0);
  }

  /**
   * Opens every lane not open yet and counts every dedicated connection not counted yet, within
   * what the server allows (see the class). Admissions run one at a time. `wait` false is for a
   * lane a module can do without (HoldfastDatabase.openLaneOnDemand): refused at once when the
   * server is full, whatever `whenServerFull` says, and admitted only while a tenth of the
   * server's connections stay free.
   */
  admit(wait = true): Promise<void> {
    const next = this.admission.then(() => this.admitPending(wait));
    this.admission = next.catch(() => undefined);
    return next;
  }

  private async admitPending(wait: boolean): Promise<void> {
    const lanes = [...this.lanes.values()].filter((p) => !p.isOpen && !p.isClosed);
    const dedicated = [...this.dedicated.values()].filter((d) => !d.admitted);
    const needed =
      lanes.reduce((sum, p) => sum + p.maxConnections, 0) +
      dedicated.reduce((sum, d) => sum + d.share.connections, 0);
    if (needed === 0) return;
    const option = configuredCoordinationPool(this.application) || {};
    const waitMs =
      wait && option.whenServerFull === 'wait'
        ? parseDuration(option.serverFullWait ?? '60s', 'coordinationPool.serverFullWait')
        : 0;
    const started = monotonicMillis();
    for (let attempt = 0; ; attempt++) {
      const refusal = await this.tryOpen(lanes, dedicated, needed, monotonicMillis() - started, wait);
      if (!refusal) {
        for (const d of dedicated) d.admitted = true;
        if (attempt > 0) this.logger.log(`Room for Holdfast's ${needed} connection(s) now: opened.`);
        return;
      }
      const waited = monotonicMillis() - started;
      if (waited >= waitMs) throw refusal;
      if (attempt === 0)
        this.logger.warn(
          `${refusal.message.split('. Nothing')[0]}. Waiting up to ${Math.round(waitMs / 1000)} s for room.`,
        );
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(waitMs - waited, WAIT_STEP_MS + Math.random() * 1_000)),
      );
    }
  }

  /** Opens `lanes` and `dedicated` if the server has room for `needed` connections; the refusal otherwise. */
  private async tryOpen(
    lanes: CoordinationPool[],
    dedicated: Dedicated[],
    needed: number,
    waitedMs: number,
    atBoot: boolean,
  ): Promise<ConnectionBudgetError | undefined> {
    const limits = await this.readLimits();
    const headroom = limits && !atBoot ? onDemandHeadroom(limits) : HEADROOM;
    if (limits && freeConnections(limits) < needed + headroom) {
      return new ConnectionBudgetError(
        this.shares,
        needed,
        describeConnectionLimits(limits),
        freeConnections(limits),
        waitedMs,
      );
    }
    const opened: DedicatedConnection[] = [];
    try {
      for (const lane of lanes) await lane.connect();
      for (const d of dedicated) {
        if (!d.connection) continue;
        try {
          await d.connection.open();
          opened.push(d.connection);
        } catch (error) {
          // Anything but the server's refusal is the module's to report and retry.
          if (isTooManyConnectionsError(error)) throw error;
        }
      }
      return undefined;
    } catch (error) {
      await Promise.all([
        ...lanes.map((lane) => lane.disconnect()),
        ...opened.map((c) => c.close().catch(() => undefined)),
      ]);
      if (!isTooManyConnectionsError(error)) throw error;
      const after = await this.readLimits();
      return new ConnectionBudgetError(
        this.shares,
        needed,
        after ? describeConnectionLimits(after) : 'the server refused a connection',
        after ? freeConnections(after) : undefined,
        waitedMs,
        error,
      );
    }
  }

  /** The server's limits, read on the application's pool; undefined where they cannot be read. */
  private async readLimits(): Promise<ServerConnectionLimits | undefined> {
    try {
      return await readConnectionLimits(this.dialect.name, (s) =>
        this.application.query(s.sql, [...s.params]),
      );
    } catch (error) {
      this.logger.debug(`Could not read the server's connection limits: ${(error as Error).message}`);
      return undefined;
    }
  }

  /** Closes every lane (the application's DataSource is being destroyed). */
  async closeAll(): Promise<void> {
    await Promise.all([...this.lanes.values()].map((p) => p.close()));
    this.dedicated.clear();
  }
}

/**
 * The lanes close with the application's DataSource at the latest: an application whose startup
 * failed never runs the modules' shutdown hooks, but it does destroy its DataSource (TypeOrmModule
 * at shutdown, or the application itself), and a lane left open would keep the process alive and
 * hold connections on the server.
 */
function closeWithApplication(application: DataSource, budget: ConnectionBudget): void {
  const destroy = application.destroy.bind(application);
  application.destroy = async () => {
    await budget.closeAll();
    return destroy();
  };
}
