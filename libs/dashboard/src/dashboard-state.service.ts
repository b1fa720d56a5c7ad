import { Inject, Injectable, type Type } from '@nestjs/common';
import { ModuleRef, ModulesContainer } from '@nestjs/core';
import { hostname } from 'node:os';
import { instanceId } from '@holdfast/core/kit';
import { DASHBOARD_OPTIONS } from './dashboard.constants';
import type { ResolvedDashboardOptions } from './dashboard.options';
import { DashboardActionsGuard } from './dashboard-actions.guard';
import type { DashboardMessage, DashboardState, InboxSection, Section } from './dashboard-state';
import { shownError } from './error-text';
import { HoldfastLookup, type Management } from './holdfast-lookup';
import { holdfastModules } from './holdfast-modules';
import { readFailoverSection } from './sections/failover.section';
import { readHealth } from './sections/health.section';
import { dashboardMessage, readInboxSection } from './sections/inbox.section';
import { readLockerSection, readScheduledSection } from './sections/locker.section';
import { readSimbaSection } from './sections/simba.section';
import { readInboxStats, readMessageHistory } from './sections/inbox-history.section';
import type { DashboardHistory, DashboardStats } from './sections/inbox-history.types';

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
  pauseType(type: string, options: { reason?: string; actor?: string }): Promise<unknown>;
  resumeType(type: string, options: { actor?: string }): Promise<boolean>;
}

/** What `api/inbox/messages` answers: `total` counts every message of the query (exact). */
export interface DashboardMessagePage {
  total: number;
  messages: DashboardMessage[];
}

type ListedStatus = Parameters<Management['count']>[0];

/**
 * Reads the state of whichever Holdfast modules the application imports. Each module's services
 * are looked up anywhere in the application (HoldfastLookup); a module that is not there has no
 * section; a package that is not installed is not loaded at all (see holdfast-modules.ts).
 * Every read is the module's own: its services, its health figures, its status read-model (one
 * file per section in sections/).
 */
@Injectable()
export class DashboardStateService {
  /**
   * Made here rather than injected: this service is public, and a HoldfastLookup in its
   * constructor would make the dashboard's declarations name the optional Holdfast packages.
   */
  private readonly lookup: HoldfastLookup;

  constructor(
    moduleRef: ModuleRef,
    modules: ModulesContainer,
    @Inject(DASHBOARD_OPTIONS) private readonly options: ResolvedDashboardOptions,
    private readonly actions: DashboardActionsGuard,
  ) {
    this.lookup = new HoldfastLookup(moduleRef, modules);
  }

  async read(): Promise<DashboardState> {
    const { failover: f, simba: s, locker: l } = holdfastModules();
    const details = this.options.errorDetails;
    const inboxes = this.lookup.inboxes();
    const [failover, simba, locker, scheduled, health, ...inboxSections] = await Promise.all([
      f
        ? this.section(f.FAILOVER_STATUS_TOKENS.registry, () => readFailoverSection(this.lookup, details))
        : undefined,
      s ? this.section(s.MutexContendRegistry, () => readSimbaSection(this.lookup)) : undefined,
      l ? this.section(l.LockerService, () => readLockerSection(this.lookup, details)) : undefined,
      l
        ? this.section(l.LOCKER_STATUS_TOKENS.scheduledExecutor, () =>
            readScheduledSection(this.lookup, details),
          )
        : undefined,
      readHealth(this.lookup, details),
      ...inboxes.map((instance) =>
        this.guarded(() => readInboxSection(instance, this.options.messageLimit, details)),
      ),
    ]);
    let inbox: Section<InboxSection> | undefined;
    const namedInboxes: Record<string, Section<InboxSection>> = {};
    inboxes.forEach(({ name }, i) => {
      if (name === holdfastModules().inbox?.INBOX_STATUS_TOKENS.defaultName) inbox = inboxSections[i];
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
   * The admin service of the inbox named `name` (the default inbox without one), or undefined
   * when the application has no such InboxModule.
   */
  management(name?: string): DashboardMessageAdmin | undefined {
    return this.lookup.inbox(name)?.management;
  }

  /** A message's attempts (the inbox's `history` option); undefined when there is no such inbox. */
  async history(inbox: string | undefined, id: string): Promise<DashboardHistory | undefined> {
    const management = this.lookup.inbox(inbox)?.management;
    return management ? readMessageHistory(management, id, this.options.errorDetails) : undefined;
  }

  /** The inbox's last hour per minute (its `stats` option); undefined when there is no such inbox. */
  async stats(inbox: string | undefined): Promise<DashboardStats | undefined> {
    const found = this.lookup.inbox(inbox);
    return found ? readInboxStats(found.management, found.clock) : undefined;
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
    const management = this.lookup.inbox(query.inbox)?.management;
    if (!management) return undefined;
    if (query.id !== undefined) {
      const found = await management.get(query.id);
      return { total: found ? 1 : 0, messages: found ? [this.message(found)] : [] };
    }
    const status = query.status as ListedStatus;
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
    status: ListedStatus,
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

  /** undefined when the module is absent; its error when reading it failed. */
  private async section<T>(marker: Type<unknown>, read: () => Promise<T>): Promise<Section<T> | undefined> {
    if (!this.lookup.optional(marker)) return undefined;
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

  private message(info: Parameters<typeof dashboardMessage>[0]): DashboardMessage {
    return dashboardMessage(info, this.options.errorDetails);
  }
}
