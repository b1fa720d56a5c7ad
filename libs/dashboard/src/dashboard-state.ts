/** What `GET <path>/api/state` answers. A section is absent when its module is not imported. */
export interface DashboardState {
  /** When this instance read the state (its own clock, ISO). */
  readAt: string;
  /**
   * This process: its instance id (core's `<random>:<pid>@<host>`), the one every module here
   * writes as owner, holder or master, and logs.
   */
  instance: { id: string; pid: number; hostname: string };
  title: string;
  pollIntervalMs: number;
  /** true when forRoot was given a guard: the page offers the inbox actions. */
  actions: boolean;
  failover?: Section<FailoverSection>;
  simba?: Section<SimbaSection>;
  locker?: Section<LockerSection>;
  /** The default inbox (`InboxModule.forRoot()` without a `name`). */
  inbox?: Section<InboxSection>;
  /** Each named inbox (`InboxModule.forRoot({ name })`), by name; absent when there is none. */
  namedInboxes?: Record<string, Section<InboxSection>>;
  /** @ScheduledLock jobs (ScheduledLockModule): absent when the application has none. */
  scheduled?: Section<ScheduledSection>;
  /** Each module's health indicator, as terminus would read it, by module. */
  health: Record<string, { status: 'up' | 'down'; [detail: string]: unknown }>;
}

export interface ScheduledSection {
  /** The instance id this instance's runs start their holder name with (`<id>:<run>`). */
  holderPrefix: string;
  jobs: Array<{
    name: string;
    /** `Class.method`, or null for a lock row this instance has no job for (another service's). */
    where: string | null;
    /** This instance's runs and skips since it started. */
    runs: number;
    skips: number;
    lastRunAt: string | null;
    lastRunMs: number | null;
    lastRunError: string | null;
    lastSkipAt: string | null;
    lastSkipReason: string | null;
    /** The lock row: who ran or runs the last tick, and TIME − now (> 0: locked that long). */
    holder: string | null;
    holderIsThisInstance: boolean;
    timeFromNowMs: number | null;
  }>;
}

/** A module's section, or the error that reading it met (the other sections still show). */
export type Section<T> = T | { error: string };

export interface FailoverSection {
  store: string;
  pendingWrites: number;
  storeErrors: number;
  failovers: Array<{
    name: string;
    declaredOn: string;
    /** Stored entries not yet expired, in the store every instance shares (null when it cannot count). */
    liveEntries: number | null;
    /** Calls by outcome, this instance since it started (the store's entries are the cluster's). */
    calls: Record<string, number>;
    /** Answers served from the store while the upstream failed (this instance since it started). */
    staleServed: number;
    lastError: { message: string; at: string } | null;
  }>;
}

export interface SimbaSection {
  /** Database clock (epoch ms) the expiries are measured on; null if the table could not be read. */
  databaseNow: number | null;
  mutexes: Array<{
    mutex: string;
    owner: string | null;
    /** This instance (process) owns it: one of simba's contenders or another one, such as the inbox's leader mutex. */
    ownedHere: boolean;
    /** This instance contends for it. */
    contendedHere: boolean;
    fencingToken: number | null;
    state: 'owned' | 'transition' | 'free';
    expiresInMs: number | null;
  }>;
}

export interface LockerSection {
  lockName: string;
  instanceId: string;
  role: 'master' | 'standby';
  state: string;
  holder: string | null;
  lastKeepAlive: string | null;
  lastError: string | null;
  /**
   * Every row of HOLDFAST_LOCK (database lockers): its master and TIME − now on the database clock
   * (> 0 a lease still running, ≤ 0 the age of the last keep-alive); null for a shared-file locker.
   */
  locks: Array<{
    lock: string;
    master: string | null;
    /** The master is this process (a LockerModule's or a @ScheduledLock run's holder name). */
    masterHere: boolean;
    timeFromNowMs: number | null;
  }> | null;
}

export interface DashboardMessage {
  id: string;
  type: string;
  status: string;
  retries: number;
  inserted: string;
  error: string | null;
}

export interface InboxSection {
  counts: Record<string, number>;
  oldestDue: (DashboardMessage & { ageMs: number }) | null;
  parked: DashboardMessage[];
  paused: DashboardMessage[];
  /** The message types paused across the cluster (MessageManagement.pauseType), by label. */
  pausedTypes: { type: string; pausedBy: string; pausedAt: string; reason: string | null }[];
}
