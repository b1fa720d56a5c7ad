import { randomUUID } from 'node:crypto';
import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleInit,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import {
  findSchedulerRegistry,
  HoldfastTimers,
  isTooManyConnectionsError,
  OutageLog,
  parseDuration,
  PgListener,
  StatementBinder,
  withTimeout,
} from '@holdfast/core/kit';
import { InboxDelivery } from '../delivery/inbox-delivery.service';
import { INBOX_OPTIONS } from '../inbox.tokens';
import type { ResolvedInboxOptions } from '../options/resolved-inbox-options';
import { InboxConnection } from '../store/inbox-connection';
import { PAUSE_NOTIFICATION } from '../store/inbox-pause.statements';

/** How long the startup probe waits for its own notification before calling the listener deaf. */
const PROBE_TIMEOUT_MS = 3_000;
/** What a probe's payload starts with: an accept's notification is empty. */
const PROBE_PREFIX = 'probe:';
/** Bound on connecting and on the LISTEN statement. */
const CONNECT_TIMEOUT_MS = 5_000;
/** Reconnect backoff: doubles from the first to the last, with up to 20% taken off at random. */
const RECONNECT_FIRST_MS = 250;
const RECONNECT_MAX_MS = 10_000;

/**
 * PostgreSQL LISTEN for the inbox's channel on a dedicated connection (core's PgListener). A
 * notification (an accept committed on any node) starts a delivery run at once through
 * `InboxDelivery.wake()`. Polling goes on underneath, whatever happens here.
 *
 * After connecting it sends itself a notification through the DataSource (the way accepts
 * send theirs) and waits for it: a listener that does not hear it (behind PgBouncer in transaction
 * mode, or a `notifyListenUrl` that reaches another database) is closed with one warning, and the
 * node delivers by polling. The same probe runs every `notifyCheckInterval` while it listens: a
 * connection that has gone silent without closing (packets dropped on the way) is replaced. A
 * probe wakes nobody: every node of the fleet hears every node's probe on the shared channel, and
 * a probe that woke their deliveries would make each of N nodes claim N times per interval. A
 * dropped connection is reopened with backoff; the outage logs one warning when it starts and one
 * when it ends.
 *
 * The LISTEN connection is one of Holdfast's own on the server (ConnectionBudget): it is opened
 * in the admission with the coordination lanes (unless `notifyListenUrl` leads elsewhere), so
 * that an instance the server has no room for is refused, and a newcomer cannot take its place
 * between the admission and the start.
 */
@Injectable()
export class InboxNotifyListener implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(InboxNotifyListener.name);
  private timers = new HoldfastTimers();
  private client?: PgListener;
  /** The LISTEN connection the admission opened, until the listener starts with it. */
  private opened?: PgListener;
  private channel?: string;
  private stopped = true;
  private attempts = 0;
  /** The listener's outages: one warning when one starts, one when it ends (core's OutageLog). */
  private readonly outage = new OutageLog(
    this.logger,
    () => `LISTEN connection for ${this.connection.store.table}`,
  );
  private probe?: { nonce: string; heard: () => void };
  private _listening = false;
  /** `notifyCheckInterval` in ms: how often a listening connection proves it still hears. */
  private readonly checkMs: number;

  constructor(
    private readonly connection: InboxConnection,
    private readonly delivery: InboxDelivery,
    @Inject(INBOX_OPTIONS) private readonly options: ResolvedInboxOptions,
    private readonly moduleRef: ModuleRef,
  ) {
    this.checkMs = parseDuration(options.notifyCheckInterval, 'notifyCheckInterval');
  }

  /** True while the listener is connected, LISTENing and known to hear (its probe came back). */
  get listening(): boolean {
    return this._listening;
  }

  onModuleInit(): void {
    if (!this.options.deliver) return;
    this.channel = this.connection.notifyChannel;
    if (!this.channel || this.options.notifyListenUrl) return;
    this.connection.dedicateConnection(
      `listen:${this.channel}`,
      `LISTEN for ${this.connection.store.table}`,
      {
        open: () => this.openInAdmission(),
        close: async () => {
          const opened = this.opened;
          this.opened = undefined;
          await opened?.close();
        },
      },
    );
  }

  /**
   * The admission's part: connects and LISTENs. The server's refusal refuses the instance; any
   * other failure is reported by `connect` at the start, which tries again.
   */
  private async openInAdmission(): Promise<void> {
    const client = this.newClient();
    try {
      await client.listen();
      this.opened = client;
    } catch (error) {
      void client.close();
      if (isTooManyConnectionsError(error)) throw error;
    }
  }

  onApplicationBootstrap(): void {
    if (!this.options.deliver || !this.channel) return;
    this.timers = new HoldfastTimers(findSchedulerRegistry(this.moduleRef));
    this.stopped = false;
    // In the background: startup does not wait for the listener (polling covers the meantime).
    // Once Holdfast's connections are admitted: the LISTEN connection is counted in the budget,
    // and an instance refused at startup must not open it.
    void this.connection.admitted().then(
      () => this.connect(),
      () => undefined,
    );
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.timers.clearAll();
    this._listening = false;
    const client = this.client;
    const opened = this.opened;
    this.client = undefined;
    this.opened = undefined;
    await Promise.all([client?.close(), opened?.close()]);
  }

  private get timerName(): string {
    return `holdfast:inbox:listen:${this.connection.store.table}`;
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    this.attempts++;
    let client: PgListener | undefined;
    try {
      // The connection the admission opened, if it is still there; a new one otherwise.
      const opened = this.opened;
      this.opened = undefined;
      client = opened ?? this.newClient();
      this.client = client;
      const own = client;
      if (!opened) await own.listen();
      if (this.client !== own || this.stopped) return;
      const hears = await this.probeHears();
      if (this.client !== own || this.stopped) return; // closed meanwhile (shutdown, a drop)
      if (!hears) {
        this.client = undefined;
        void own.close();
        this.logger.warn(
          `LISTEN on channel ${this.channel} does not hear the inbox's notifications (PgBouncer in transaction ` +
            `mode? set notifyListenUrl to the PostgreSQL server or a session-mode pool): this node finds ` +
            `messages accepted elsewhere at its next poll (pollInterval ${String(this.options.pollInterval)})`,
        );
        return;
      }
      this._listening = true;
      if (this.outage.ongoing) {
        this.outage.succeeded();
        // Anything accepted during the outage: look now rather than at the next poll.
        this.delivery.wake();
      } else {
        this.logger.debug(`Listening on ${this.channel}`);
      }
      this.attempts = 0;
      this.armCheck(own);
    } catch (error) {
      if (client) this.dropped(client, error as Error);
    }
  }

  /**
   * The next check that the listener still hears. It only judges when the probe's NOTIFY went
   * through the DataSource: when the database cannot be reached at all, there is nothing to
   * replace yet, and the next check looks again.
   */
  private armCheck(client: PgListener): void {
    this.timers.set(this.timerName, this.checkMs, () => {
      if (this.client !== client || this.stopped) return;
      void this.probeHears().then(
        (hears) => {
          if (this.client !== client || this.stopped) return;
          if (hears) this.armCheck(client);
          else this.dropped(client, new Error('it stopped hearing its own probe notification'));
        },
        () => this.armCheck(client),
      );
    });
  }

  /** Sends a notification through the DataSource and waits for this listener to hear it. */
  private async probeHears(): Promise<boolean> {
    const nonce = `${PROBE_PREFIX}${randomUUID()}`;
    let heard!: () => void;
    const arrived = new Promise<true>((resolve) => (heard = () => resolve(true)));
    this.probe = { nonce, heard };
    try {
      const sql = this.connection.sql;
      const b = new StatementBinder(sql.dialect);
      await sql.query(b.statement(`SELECT pg_notify(${b.bind(this.channel)}, ${b.bind(nonce)})`));
      return await withTimeout(arrived, PROBE_TIMEOUT_MS, () => false);
    } finally {
      this.probe = undefined;
    }
  }

  /** The connection failed or closed: one warning per outage, then reconnect with backoff. */
  private dropped(client: PgListener, error?: Error): void {
    if (this.client !== client) return; // an old connection, already replaced or closed by us
    this.client = undefined;
    this._listening = false;
    void client.close();
    if (this.stopped) return;
    this.outage.failed(error ?? new Error('closed by the server'), {
      during: this.outage.ongoing ? `reconnect attempt ${this.attempts}` : undefined,
      consequence: `delivering by polling (pollInterval ${String(this.options.pollInterval)}) and reconnecting`,
    });
    const base = Math.min(RECONNECT_MAX_MS, RECONNECT_FIRST_MS * 2 ** Math.min(this.attempts, 10));
    this.timers.set(this.timerName, base * (1 - Math.random() * 0.2), () => void this.connect());
  }

  /**
   * The LISTEN connection: a pg Client of the driver the DataSource already uses, on the
   * DataSource's own connection options, or on `notifyListenUrl` when set.
   */
  private newClient(): PgListener {
    const listener: PgListener = new PgListener(this.connection.sql.dataSource, {
      channel: this.channel!,
      connectionString: this.options.notifyListenUrl || undefined,
      applicationName: 'holdfast-inbox-listen',
      connectTimeoutMs: CONNECT_TIMEOUT_MS,
      onNotification: (payload) => {
        if (payload?.startsWith(PROBE_PREFIX)) {
          if (this.probe && payload === this.probe.nonce) this.probe.heard();
          return;
        }
        if (payload === PAUSE_NOTIFICATION) this.delivery.pausesChanged();
        else this.delivery.wake();
      },
      onDropped: (error) => {
        // Dropped between the admission and the start: the start opens a new one.
        if (this.opened === listener) {
          this.opened = undefined;
          return;
        }
        this.dropped(listener, error);
      },
    });
    return listener;
  }
}
