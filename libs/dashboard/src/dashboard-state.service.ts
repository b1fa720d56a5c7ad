import { Inject, Injectable, type Type } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { hostname } from 'node:os';
import { type LockStatus } from '@holdfast/cli';
import { StatusQueries } from '@holdfast/cli/internal';
import { resolveDataSource, sqlClientFor, type SqlClient } from '@holdfast/core';
import { FailoverMetrics, getFailoverStoreToken } from '@holdfast/failover';
import { FailoverRegistry, FailoverWriter } from '@holdfast/failover/internal';
import { MessageManagement, type MessageInfo } from '@holdfast/inbox';
import { InboxClock } from '@holdfast/inbox/internal';
import { LockerService, type ResolvedLockerOptions } from '@holdfast/locker';
import { LOCKER_OPTIONS } from '@holdfast/locker/internal';
import { MutexContendRegistry, type ResolvedSimbaOptions } from '@holdfast/simba';
import { SIMBA_RESOLVED_OPTIONS } from '@holdfast/simba/internal';
import { DASHBOARD_OPTIONS } from './dashboard.constants';
import type { ResolvedDashboardOptions } from './dashboard.options';
import { DashboardActionsGuard } from './dashboard-actions.guard';
import type {
  DashboardMessage,
  DashboardState,
  FailoverSection,
  InboxSection,
  LockerSection,
  Section,
  SimbaSection,
} from './dashboard-state';

type FailoverStoreLike = { description?: string; countLive?(name: string, now: Date): Promise<number> };

/**
 * Reads the state of whichever Holdfast modules the application imports. Each module's services
 * are looked up anywhere in the application (`strict: false`); a module that is not there has no
 * section. Every read is the module's own: its services, its health figures, and for the
 * simba table the same query `holdfast status` runs.
 */
@Injectable()
export class DashboardStateService {
  private readonly sqlClients = new Map<unknown, SqlClient>();

  constructor(
    private readonly moduleRef: ModuleRef,
    @Inject(DASHBOARD_OPTIONS) private readonly options: ResolvedDashboardOptions,
    private readonly actions: DashboardActionsGuard,
  ) {}

  async read(): Promise<DashboardState> {
    const [failover, simba, locker, inbox] = await Promise.all([
      this.section(FailoverRegistry, () => this.failover()),
      this.section(MutexContendRegistry, () => this.simba()),
      this.section(LockerService, () => this.locker()),
      this.section(MessageManagement, () => this.inbox()),
    ]);
    return {
      readAt: new Date().toISOString(),
      instance: { pid: process.pid, hostname: hostname() },
      title: this.options.title,
      pollIntervalMs: this.options.pollIntervalMs,
      actions: this.actions.enabled,
      ...(failover ? { failover } : {}),
      ...(simba ? { simba } : {}),
      ...(locker ? { locker } : {}),
      ...(inbox ? { inbox } : {}),
    };
  }

  /** The inbox's admin service, or undefined when the application has no InboxModule. */
  management(): MessageManagement | undefined {
    return this.optional(MessageManagement);
  }

  private optional<T>(token: Type<T> | string | symbol): T | undefined {
    try {
      return this.moduleRef.get<T>(token as Type<T>, { strict: false });
    } catch {
      return undefined;
    }
  }

  /** undefined when the module is absent; its error when reading it failed. */
  private async section<T>(marker: Type<unknown>, read: () => Promise<T>): Promise<Section<T> | undefined> {
    if (!this.optional(marker)) return undefined;
    try {
      return await read();
    } catch (error) {
      return { error: error instanceof Error ? error.message : String(error) };
    }
  }

  private async failover(): Promise<FailoverSection> {
    const registry = this.optional(FailoverRegistry)!;
    const metrics = this.optional(FailoverMetrics);
    const writer = this.optional(FailoverWriter);
    const store = this.optional<FailoverStoreLike>(getFailoverStoreToken());
    const now = new Date();
    const failovers = await Promise.all(
      registry.list().map(async ({ metadata, declaredOn }) => {
        const tally = metrics?.byFailover.get(metadata.name);
        const liveEntries = store?.countLive
          ? await store.countLive(metadata.effectiveName, now).catch(() => null)
          : null;
        return {
          name: metadata.name,
          declaredOn,
          liveEntries,
          calls: { ...(tally?.outcomes ?? {}) },
          staleServed: tally?.outcomes.recovered ?? 0,
          lastError: tally?.lastError
            ? { message: tally.lastError.message, at: tally.lastError.at.toISOString() }
            : null,
        };
      }),
    );
    return {
      store: store?.description ?? 'custom',
      pendingWrites: writer?.pending ?? 0,
      storeErrors: metrics?.storeErrors ?? 0,
      failovers: failovers.sort((a, b) => a.name.localeCompare(b.name)),
    };
  }

  private async simba(): Promise<SimbaSection> {
    const registry = this.optional(MutexContendRegistry)!;
    const options = this.optional<ResolvedSimbaOptions>(SIMBA_RESOLVED_OPTIONS);
    const sql = this.sqlClient(options?.dataSource);
    const status = await new StatusQueries(sql, options?.tablePrefix ?? '').read(['owners']);
    const local = new Map(registry.all().map((s) => [s.mutex, s]));
    const mutexes = (status.owners ?? []).map((row) => {
      const here = local.get(row.mutex);
      return {
        ...row,
        ownedHere: !!here && row.owner !== null && row.owner === here.contenderId,
        contendedHere: !!here,
        fencingToken: row.owner === null ? null : row.fencingToken,
      };
    });
    // A mutex contended here that has no row yet (the first contention has not run).
    for (const [mutex] of local) {
      if (!mutexes.some((m) => m.mutex === mutex)) {
        mutexes.push({
          mutex,
          owner: null,
          ownedHere: false,
          contendedHere: true,
          fencingToken: null,
          state: 'free',
          expiresInMs: null,
        });
      }
    }
    return { databaseNow: status.databaseNow, mutexes };
  }

  /** One SqlClient per DataSource option a module names (undefined: the default DataSource). */
  private sqlClient(option: unknown): SqlClient {
    let sql = this.sqlClients.get(option);
    if (!sql) {
      const dataSource = resolveDataSource(this.moduleRef, option as string | undefined, 'HoldfastDashboard');
      sql = sqlClientFor(dataSource);
      this.sqlClients.set(option, sql);
    }
    return sql;
  }

  private async locker(): Promise<LockerSection> {
    const locker = this.optional(LockerService)!;
    const options = this.optional<ResolvedLockerOptions>(LOCKER_OPTIONS);
    // Every lock row of HOLDFAST_LOCK (the lockers with a table), as `holdfast status` reads them.
    let locks: LockStatus[] | null = null;
    if (options && (options.locker.type === 'lease-database' || options.locker.type === 'database')) {
      locks = (
        await new StatusQueries(this.sqlClient(options.dataSource), options.tablePrefix).read(['masters'])
      ).masters;
    }
    const holder = await locker.readHolder().catch(() => locker.holder);
    const lastError = locker.lastError;
    return {
      lockName: locker.lockName,
      instanceId: locker.instanceId,
      role: locker.isMaster ? 'master' : 'standby',
      state: locker.role,
      holder: holder ?? null,
      lastKeepAlive: locker.lastKeepAlive?.toISOString() ?? null,
      locks,
      lastError:
        lastError === undefined || lastError === null
          ? null
          : lastError instanceof Error
            ? lastError.message
            : String(lastError),
    };
  }

  private async inbox(): Promise<InboxSection> {
    const management = this.management()!;
    const limit = this.options.messageLimit;
    const clock = this.optional(InboxClock);
    const [now, counts, [oldest], parked, paused] = await Promise.all([
      clock ? clock.now() : Date.now(),
      management.count(),
      management.list({ status: 'due', limit: 1 }),
      management.list({ status: 'parked', limit }),
      management.list({ status: 'paused', limit }),
    ]);
    return {
      counts: { ...counts },
      oldestDue: oldest ? { ...message(oldest), ageMs: Math.max(0, now - oldest.inserted.getTime()) } : null,
      parked: parked.map(message),
      paused: paused.map(message),
    };
  }
}

function message(info: MessageInfo): DashboardMessage {
  const { namespace, name, revision } = info.type;
  return {
    id: info.id,
    type: [namespace, name].filter(Boolean).join('/') + (revision ? `@${revision}` : ''),
    status: info.status,
    retries: info.retries,
    inserted: info.inserted.toISOString(),
    error: info.error ?? null,
  };
}
