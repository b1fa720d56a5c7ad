import type {
  DataSourceOption,
  Dialect,
  Duration,
  HoldfastDatabaseOptions,
  SchemaMode,
} from '@holdfast/core/kit';

export interface SimbaModuleOptions {
  /** The TypeORM DataSource, or the name of a @nestjs/typeorm one; default the default DataSource. */
  dataSource?: DataSourceOption;
  /** Prefix of the `simba_mutex` table. */
  tablePrefix?: string;
  /** How long an acquisition lasts before the owner renews it. Default '10s'. */
  ttl?: Duration;
  /** Grace window after the ttl in which only the owner may renew; others wait it out. Default '6s'. */
  transition?: Duration;
  /** Delay before the first acquisition attempt after start(). Default 0. */
  initialDelay?: Duration;
  /**
   * How often a standby looks at the row (one SELECT) for an early release, so a graceful
   * handover takes about this long instead of ttl + transition. Default '500ms'.
   */
  standbyPoll?: Duration;
  /** Per-call database timeout; must be shorter than `transition`. Default transition / 3. */
  statementTimeout?: Duration;
  /** 'create' makes the table, 'check' (default) fails startup when it is missing, 'none' skips. */
  schema?: SchemaMode;
  /** Override the detected dialect. */
  dialect?: Dialect;
  /** Start the contend services found by the explorer at bootstrap. Default true. */
  autoStart?: boolean;
  /**
   * Simba's `simba.enabled`: false starts nothing (no table check, no contending) while every
   * provider still injects; calls that need the database throw SimbaDisabledError. Default true.
   */
  enabled?: boolean;
  /**
   * Mutex-name prefixes, each a group of mutexes to spread over the instances that contend for
   * them (`['shard-']`: `shard-0` … `shard-19` go to different instances, each about its share),
   * instead of leaving them all to whichever instance tries first. Never two owners; mutexes move
   * only when an instance joins or leaves. Not for `SimbaLocker`'s blocking acquires. Default none.
   */
  spread?: string[];
}

/** Options after defaults, validation and parsing: every duration in milliseconds. */
export interface ResolvedSimbaOptions extends HoldfastDatabaseOptions {
  ttl: number;
  transition: number;
  initialDelay: number;
  standbyPoll: number;
  statementTimeout: number;
  autoStart: boolean;
  enabled: boolean;
  spread: string[];
}
