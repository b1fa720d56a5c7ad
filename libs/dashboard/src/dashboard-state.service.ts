import { Inject, Injectable, type Type } from '@nestjs/common';
import { ModuleRef, ModulesContainer } from '@nestjs/core';
import { hostname } from 'node:os';
import {
  instanceId,
  isThisInstance,
  resolveDataSource,
  sqlClientFor,
  type SqlClient,
} from '@holdfast/core/kit';
import type { MessageInfo } from '@holdfast/inbox';
import { DASHBOARD_OPTIONS } from './dashboard.constants';
import type { ResolvedDashboardOptions } from './dashboard.options';
import { DashboardActionsGuard } from './dashboard-actions.guard';
import type {
  DashboardMessage,
  DashboardState,
  FailoverSection,
  InboxSection,
  LockerSection,
  ScheduledSection,
  Section,
  SimbaSection,
} from './dashboard-state';
import { shownError } from './error-text';
import { holdfastModules, type HoldfastModules } from './holdfast-modules';

/**
 * The inbox admin operations the dashboard's actions call (an inbox's MessageManagement): a
 * structural type, so the dashboard's declarations need no @holdfast/inbox installed.
 */
export interface DashboardMessageAdmin {
  payload(id: string): Promise<{ encoding: string; payload: unknown } | undefined>;
  retryNow(id: string): Promise<void>;
  pause(id: string): Promise<void>;
  resume(id: string): Promise<boolean>;
  delete(id: string): Promise<boolean>;
}

/** What `api/inbox/messages` answers: `total` counts every message of the query (exact). */
export interface DashboardMessagePage {
  total: number;
  messages: DashboardMessage[];
}

type Management = InstanceType<NonNullable<HoldfastModules['inbox']>['MessageManagement']>;
type Clock = InstanceType<NonNullable<HoldfastModules['inbox']>['InboxClock']>;

type FailoverStoreLike = { description?: string; countLive?(name: string, now: Date): Promise<number> };

/** One InboxModule of the application: its name and the services of that module instance. */
interface InboxInstance {
  name: string;
  management: Management;
  clock?: Clock;
}

/**
 * Reads the state of whichever Holdfast modules the application imports. Each module's services
 * are looked up anywhere in the application (`strict: false`); a module that is not there has no
 * section; a package that is not installed is not loaded at all (see holdfast-modules.ts).
 * Every read is the module's own: its services, its health figures, its own table reader.
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
    const { failover: f, simba: s, locker: l } = holdfastModules();
    const inboxes = this.inboxes();
    const [failover, simba, locker, scheduled, health, ...inboxSections] = await Promise.all([
      f ? this.section(f.FailoverRegistry, () => this.failover()) : undefined,
      s ? this.section(s.MutexContendRegistry, () => this.simba()) : undefined,
      l ? this.section(l.LockerService, () => this.locker()) : undefined,
      l ? this.section(l.ScheduledLockExecutor, () => this.scheduled()) : undefined,
      this.health(),
      ...inboxes.map((instance) => this.guarded(() => this.inbox(instance))),
    ]);
    let inbox: Section<InboxSection> | undefined;
    const namedInboxes: Record<string, Section<InboxSection>> = {};
    inboxes.forEach(({ name }, i) => {
      if (name === holdfastModules().inbox?.DEFAULT_INBOX_NAME) inbox = inboxSections[i];
      else namedInboxes[name] = inboxSections[i];
    });
    return {
      readAt: new Date().toISOString(),
      instance: { id: instanceId(), pid: process.pid, hostname: hostname() },
      title: this.options.title,
      pollIntervalMs: this.options.pollIntervalMs,
      actions: this.actions.enabled,
      ...(failover ? { failover } : {}),
      ...(simba ? { simba } : {}),
      ...(locker ? { locker } : {}),
      ...(inbox ? { inbox } : {}),
      ...(Object.keys(namedInboxes).length ? { namedInboxes } : {}),
      ...(scheduled ? { scheduled } : {}),
      health,
    };
  }

  /**
   * Each present module's health indicator (the default instance's), as terminus reads it: one
   * entry per module, `down` with its reason when the indicator says so or throws.
   */
  private async health(): Promise<DashboardState['health']> {
    const m = holdfastModules();
    const indicators: Array<[string, Type<{ isHealthy(key?: string): Promise<Record<string, unknown>> }>]> =
      [];
    if (m.failover) indicators.push(['failover', m.failover.FailoverHealthIndicator]);
    if (m.simba) indicators.push(['simba', m.simba.SimbaHealthIndicator]);
    if (m.locker) indicators.push(['locker', m.locker.LockerHealthIndicator]);
    if (m.inbox) indicators.push(['inbox', m.inbox.InboxHealthIndicator]);
    const health: DashboardState['health'] = {};
    await Promise.all(
      indicators.map(async ([name, token]) => {
        const indicator = this.optional(token);
        if (!indicator) return;
        try {
          const answer = (await indicator.isHealthy(name))[name] as DashboardState['health'][string];
          health[name] = answer ?? { status: 'down', error: 'no answer' };
        } catch (error) {
          const text = error instanceof Error ? error.message : String(error);
          health[name] = { status: 'down', error: shownError(text, this.options.errorDetails) };
        }
      }),
    );
    return Object.fromEntries(Object.entries(health).sort(([a], [b]) => a.localeCompare(b)));
  }

  /**
   * The @ScheduledLock jobs: what this instance saw of each (runs, skips, the last of each), and
   * each job's lock row in HOLDFAST_LOCK (its holder and lease), which is the cluster's.
   */
  private async scheduled(): Promise<ScheduledSection> {
    const l = holdfastModules().locker!;
    const executor = this.optional(l.ScheduledLockExecutor)!;
    const options = this.optional<{ dataSource?: unknown; tablePrefix: string }>(l.SCHEDULED_LOCK_OPTIONS);
    const activity = executor.jobs();
    const rows = options
      ? ((await l.readLockStatus(this.sqlClient(options.dataSource), options.tablePrefix)) ?? [])
      : [];
    const row = (name: string) => rows.find((r) => r.lock === name);
    const prefix = `${executor.holderPrefix}:`;
    const jobs: ScheduledSection['jobs'] = activity.map((a) => {
      const lock = row(a.name);
      return {
        ...a,
        lastRunError: shownError(a.lastRunError, this.options.errorDetails),
        holder: lock?.master ?? null,
        holderIsThisInstance: !!lock?.master?.startsWith(prefix),
        timeFromNowMs: lock?.timeFromNowMs ?? null,
      };
    });
    return { holderPrefix: executor.holderPrefix, jobs: jobs.sort((a, b) => a.name.localeCompare(b.name)) };
  }

  /**
   * The admin service of the inbox named `name` (the default inbox without one), or undefined
   * when the application has no such InboxModule.
   */
  management(name?: string): DashboardMessageAdmin | undefined {
    const wanted = name ?? holdfastModules().inbox?.DEFAULT_INBOX_NAME;
    return this.inboxes().find((inbox) => inbox.name === wanted)?.management;
  }

  /**
   * One page of an inbox's messages in `status` (parked, paused, due, retrying), or the one
   * message `id` whatever its status; undefined when the application has no such inbox.
   */
  async messages(query: {
    inbox?: string;
    status: string;
    offset: number;
    limit: number;
    id?: string;
    type?: string;
  }): Promise<DashboardMessagePage | undefined> {
    const wanted = query.inbox ?? holdfastModules().inbox?.DEFAULT_INBOX_NAME;
    const management = this.inboxes().find((inbox) => inbox.name === wanted)?.management;
    if (!management) return undefined;
    if (query.id !== undefined) {
      const found = await management.get(query.id);
      return { total: found ? 1 : 0, messages: found ? [this.message(found)] : [] };
    }
    const status = query.status as Parameters<Management['count']>[0];
    if (query.type !== undefined) return this.messagesOfType(management, status, query.type, query);
    const [total, page] = await Promise.all([
      management.count(status),
      management.list({ status, offset: query.offset, limit: query.limit }),
    ]);
    return { total, messages: page.map((m) => this.message(m)) };
  }

  /**
   * One page of the messages of one type in `status`, filtered and counted by the database. The
   * type is the label the page (and the `holdfast` command) shows, `namespace:name[@revision]`,
   * read by the inbox's parseMessageTypeLabel: what it leaves out is not filtered.
   */
  private async messagesOfType(
    management: Management,
    status: Parameters<Management['count']>[0],
    label: string,
    { offset, limit }: { offset: number; limit: number },
  ): Promise<DashboardMessagePage> {
    const type = holdfastModules().inbox!.parseMessageTypeLabel(label);
    const [total, page] = await Promise.all([
      management.countMatching({ status, type }),
      management.list({ status, type, offset, limit }),
    ]);
    return { total, messages: page.map((m) => this.message(m)) };
  }

  /**
   * Every InboxModule of the application, default and named (`forRoot({ name })`), each with
   * the services of its own module instance: a named inbox exports them only under its own
   * tokens, so they are read from the module that registered the name. The modules are fixed
   * once the application is built, so the list is made once.
   */
  private inboxes(): InboxInstance[] {
    if (this._inboxes) return this._inboxes;
    const inbox = holdfastModules().inbox;
    const found: InboxInstance[] = [];
    if (!inbox) return (this._inboxes = found);
    for (const module of this.modules.values()) {
      const name = module.providers.get(inbox.INBOX_NAME)?.instance as string | undefined;
      const management = module.providers.get(inbox.MessageManagement)?.instance as Management | undefined;
      if (typeof name !== 'string' || !management) continue;
      const clock = module.providers.get(inbox.InboxClock)?.instance as Clock | undefined;
      found.push({ name, management, clock });
    }
    const first = inbox.DEFAULT_INBOX_NAME;
    found.sort((a, b) => (a.name === first ? -1 : b.name === first ? 1 : a.name.localeCompare(b.name)));
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
      const text = error instanceof Error ? error.message : String(error);
      return { error: shownError(text, this.options.errorDetails) };
    }
  }

  /**
   * A provider of the default FailoverModule, read from that module itself: beside a named one
   * (`forRoot({ name })`), which has the same classes, `moduleRef.get` could return the named
   * module's. Without a default module, whichever module has it.
   */
  private defaultFailover<T>(token: Type<T> | string | symbol): T | undefined {
    const { FAILOVER_STORE_NAME, DEFAULT_FAILOVER_STORE } = holdfastModules().failover!;
    for (const module of this.modules.values()) {
      if (module.providers.get(FAILOVER_STORE_NAME)?.instance !== DEFAULT_FAILOVER_STORE) continue;
      return module.providers.get(token as Type<T>)?.instance as T | undefined;
    }
    return this.optional<T>(token);
  }

  private async failover(): Promise<FailoverSection> {
    const f = holdfastModules().failover!;
    const registry = this.defaultFailover(f.FailoverRegistry)!;
    const metrics = this.defaultFailover(f.FailoverMetrics);
    const writer = this.defaultFailover(f.FailoverWriter);
    const store = this.defaultFailover<FailoverStoreLike>(f.getFailoverStoreToken());
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
            ? {
                message: shownError(tally.lastError.message, this.options.errorDetails),
                at: tally.lastError.at.toISOString(),
              }
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
    const simba = holdfastModules().simba!;
    const registry = this.optional(simba.MutexContendRegistry)!;
    const options = this.optional<{ dataSource?: unknown; tablePrefix?: string }>(simba.SIMBA_OPTIONS);
    const sql = this.sqlClient(options?.dataSource);
    const status = await simba.readMutexStatus(sql, options?.tablePrefix ?? '');
    const local = new Map(registry.all().map((s) => [s.mutex, s]));
    const mutexes: SimbaSection['mutexes'] = (status.mutexes ?? []).map((row) => {
      const here = local.get(row.mutex);
      return {
        ...row,
        ownedHere:
          row.owner !== null && ((!!here && row.owner === here.contenderId) || isThisInstance(row.owner)),
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
    const l = holdfastModules().locker!;
    const locker = this.optional(l.LockerService)!;
    const options = this.optional<{ locker: { type: string }; dataSource?: unknown; tablePrefix: string }>(
      l.LOCKER_OPTIONS,
    );
    // Every lock row of HOLDFAST_LOCK (the lockers with a table).
    let locks: LockerSection['locks'] = null;
    if (options && (options.locker.type === 'lease-database' || options.locker.type === 'database')) {
      const rows = await l.readLockStatus(this.sqlClient(options.dataSource), options.tablePrefix);
      locks = rows && rows.map((row) => ({ ...row, masterHere: isThisInstance(row.master) }));
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
          : shownError(
              lastError instanceof Error ? lastError.message : String(lastError),
              this.options.errorDetails,
            ),
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
      oldestDue: oldest
        ? { ...this.message(oldest), ageMs: Math.max(0, now - oldest.inserted.getTime()) }
        : null,
      parked: parked.map((m) => this.message(m)),
      paused: paused.map((m) => this.message(m)),
    };
  }

  private message(info: MessageInfo): DashboardMessage {
    return message(info, this.options.errorDetails);
  }
}

function message(info: MessageInfo, errorDetails: boolean): DashboardMessage {
  return {
    id: info.id,
    // The one spelling of a type, the inbox's own (namespace:name@revision).
    type: holdfastModules().inbox!.messageTypeLabel(info.type),
    status: info.status,
    retries: info.retries,
    inserted: info.inserted.toISOString(),
    error: shownError(info.error, errorDetails),
  };
}
