import { Inject, Injectable, type Type } from '@nestjs/common';
import { ModuleRef, ModulesContainer } from '@nestjs/core';
import { hostname } from 'node:os';
import { type LockStatus } from '@holdfast/cli';
import { StatusQueries } from '@holdfast/cli/internal';
import { resolveDataSource, sqlClientFor, type SqlClient } from '@holdfast/core/kit';
import { FailoverMetrics, getFailoverStoreToken } from '@holdfast/failover';
import {
  DEFAULT_FAILOVER_STORE,
  FAILOVER_STORE_NAME,
  FailoverRegistry,
  FailoverWriter,
} from '@holdfast/failover/internal';
import { MessageManagement, type MessageInfo } from '@holdfast/inbox';
import { DEFAULT_INBOX_NAME, INBOX_NAME, InboxClock } from '@holdfast/inbox/internal';
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

/** One InboxModule of the application: its name and the services of that module instance. */
interface InboxInstance {
  name: string;
  management: MessageManagement;
  clock?: InboxClock;
}

/**
 * Reads the state of whichever Holdfast modules the application imports. Each module's services
 * are looked up anywhere in the application (`strict: false`); a module that is not there has no
 * section. Every read is the module's own: its services, its health figures, and for the
 * simba table the same query `holdfast status` runs.
 */
@Injectable()
export class DashboardStateService {
  private readonly sqlClients = new Map<unknown, SqlClient>();
  private _inboxes?: InboxInstance[];

  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly modules: ModulesContainer,
    @Inject(DASHBOARD_OPTIONS) private readonly options: ResolvedDashboardOptions,
    private readonly actions: DashboardActionsGuard,
  ) {}

  async read(): Promise<DashboardState> {
    const inboxes = this.inboxes();
    const [failover, simba, locker, ...inboxSections] = await Promise.all([
      this.section(FailoverRegistry, () => this.failover()),
      this.section(MutexContendRegistry, () => this.simba()),
      this.section(LockerService, () => this.locker()),
      ...inboxes.map((instance) => this.guarded(() => this.inbox(instance))),
    ]);
    let inbox: Section<InboxSection> | undefined;
    const namedInboxes: Record<string, Section<InboxSection>> = {};
    inboxes.forEach(({ name }, i) => {
      if (name === DEFAULT_INBOX_NAME) inbox = inboxSections[i];
      else namedInboxes[name] = inboxSections[i];
    });
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
      ...(Object.keys(namedInboxes).length ? { namedInboxes } : {}),
    };
  }

  /**
   * The admin service of the inbox named `name` (the default inbox without one), or undefined
   * when the application has no such InboxModule.
   */
  management(name: string = DEFAULT_INBOX_NAME): MessageManagement | undefined {
    return this.inboxes().find((inbox) => inbox.name === name)?.management;
  }

  /**
   * Every InboxModule of the application, default and named (`forRoot({ name })`), each with
   * the services of its own module instance: a named inbox exports them only under its own
   * tokens, so they are read from the module that registered the name. The modules are fixed
   * once the application is built, so the list is made once.
   */
  private inboxes(): InboxInstance[] {
    if (this._inboxes) return this._inboxes;
    const found: InboxInstance[] = [];
    for (const module of this.modules.values()) {
      const name = module.providers.get(INBOX_NAME)?.instance as string | undefined;
      const management = module.providers.get(MessageManagement)?.instance as MessageManagement | undefined;
      if (typeof name !== 'string' || !management) continue;
      const clock = module.providers.get(InboxClock)?.instance as InboxClock | undefined;
      found.push({ name, management, clock });
    }
    found.sort((a, b) =>
      a.name === DEFAULT_INBOX_NAME ? -1 : b.name === DEFAULT_INBOX_NAME ? 1 : a.name.localeCompare(b.name),
    );
    return (this._inboxes = found);
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
    return this.guarded(read);
  }

  /** The section, or the error that reading it met (the other sections still show). */
  private async guarded<T>(read: () => Promise<T>): Promise<Section<T>> {
    try {
      return await read();
    } catch (error) {
      return { error: error instanceof Error ? error.message : String(error) };
    }
  }

  /**
   * A provider of the default FailoverModule, read from that module itself: beside a named one
   * (`forRoot({ name })`), which has the same classes, `moduleRef.get` could return the named
   * module's. Without a default module, whichever module has it.
   */
  private defaultFailover<T>(token: Type<T> | string | symbol): T | undefined {
    for (const module of this.modules.values()) {
      if (module.providers.get(FAILOVER_STORE_NAME)?.instance !== DEFAULT_FAILOVER_STORE) continue;
      return module.providers.get(token as Type<T>)?.instance as T | undefined;
    }
    return this.optional<T>(token);
  }

  private async failover(): Promise<FailoverSection> {
    const registry = this.defaultFailover(FailoverRegistry)!;
    const metrics = this.defaultFailover(FailoverMetrics);
    const writer = this.defaultFailover(FailoverWriter);
    const store = this.defaultFailover<FailoverStoreLike>(getFailoverStoreToken());
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

  private async inbox({ management, clock }: InboxInstance): Promise<InboxSection> {
    const limit = this.options.messageLimit;
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
