import { type Type } from '@nestjs/common';
import { ModuleRef, ModulesContainer } from '@nestjs/core';
import { resolveDataSource, sqlClientFor, type SqlClient } from '@holdfast/core/kit';
import { holdfastModules, type HoldfastModules } from './holdfast-modules';

export type Management = InstanceType<NonNullable<HoldfastModules['inbox']>['MessageManagement']>;
type Clock = InstanceType<NonNullable<HoldfastModules['inbox']>['INBOX_STATUS_TOKENS']['clock']>;

/** One InboxModule of the application: its name and the services of that module instance. */
export interface InboxInstance {
  name: string;
  management: Management;
  clock?: Clock;
}

/**
 * Finds the Holdfast modules' services in the application: anywhere (`strict: false`), in the
 * default FailoverModule, in each InboxModule; and one SqlClient per DataSource a module names.
 */
export class HoldfastLookup {
  private readonly sqlClients = new Map<unknown, SqlClient>();
  private _inboxes?: InboxInstance[];

  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly modules: ModulesContainer,
  ) {}

  /** The provider `token` anywhere in the application, or undefined. */
  optional<T>(token: Type<T> | string | symbol): T | undefined {
    try {
      return this.moduleRef.get<T>(token as Type<T>, { strict: false });
    } catch {
      return undefined;
    }
  }

  /** One SqlClient per DataSource option a module names (undefined: the default DataSource). */
  sqlClient(option: unknown): SqlClient {
    let sql = this.sqlClients.get(option);
    if (!sql) {
      const dataSource = resolveDataSource(this.moduleRef, option as string | undefined, 'HoldfastDashboard');
      sql = sqlClientFor(dataSource);
      this.sqlClients.set(option, sql);
    }
    return sql;
  }

  /**
   * A provider of the default FailoverModule, read from that module itself: beside a named one
   * (`forRoot({ name })`), which has the same classes, `moduleRef.get` could return the named
   * module's. Without a default module, whichever module has it.
   */
  defaultFailover<T>(token: Type<T> | string | symbol): T | undefined {
    const { storeName, defaultStore } = holdfastModules().failover!.FAILOVER_STATUS_TOKENS;
    for (const module of this.modules.values()) {
      if (module.providers.get(storeName)?.instance !== defaultStore) continue;
      return module.providers.get(token as Type<T>)?.instance as T | undefined;
    }
    return this.optional<T>(token);
  }

  /**
   * Every InboxModule of the application, default and named (`forRoot({ name })`), each with
   * the services of its own module instance: a named inbox exports them only under its own
   * tokens, so they are read from the module that registered the name. The modules are fixed
   * once the application is built, so the list is made once.
   */
  inboxes(): InboxInstance[] {
    if (this._inboxes) return this._inboxes;
    const inbox = holdfastModules().inbox;
    const found: InboxInstance[] = [];
    if (!inbox) return (this._inboxes = found);
    for (const module of this.modules.values()) {
      const name = module.providers.get(inbox.INBOX_STATUS_TOKENS.name)?.instance as string | undefined;
      const management = module.providers.get(inbox.MessageManagement)?.instance as Management | undefined;
      if (typeof name !== 'string' || !management) continue;
      const clock = module.providers.get(inbox.INBOX_STATUS_TOKENS.clock)?.instance as Clock | undefined;
      found.push({ name, management, clock });
    }
    const first = inbox.INBOX_STATUS_TOKENS.defaultName;
    found.sort((a, b) => (a.name === first ? -1 : b.name === first ? 1 : a.name.localeCompare(b.name)));
    return (this._inboxes = found);
  }

  /** The inbox named `name` (the default one without a name). */
  inbox(name?: string): InboxInstance | undefined {
    const wanted = name ?? holdfastModules().inbox?.INBOX_STATUS_TOKENS.defaultName;
    return this.inboxes().find((inbox) => inbox.name === wanted);
  }
}
