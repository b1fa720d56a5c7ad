import {
  DatabaseOptionsDto,
  IsDurationOption,
  parseDuration,
  validateOptions,
  type DataSourceOption,
  type Dialect,
  type Duration,
  type HoldfastDatabaseOptions,
  type SchemaMode,
  InvalidOptionsError,
} from '@holdfast/core/kit';
import { IsBoolean, IsOptional, ValidateBy, type ValidationOptions } from 'class-validator';

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
}

function IsPositiveDuration(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isPositiveDuration',
      validator: {
        validate: (value: unknown) => {
          try {
            return parseDuration(value as Duration) > 0;
          } catch {
            return false;
          }
        },
        defaultMessage: () => "must be a duration greater than 0 (milliseconds or a string like '6s')",
      },
    },
    options,
  );
}

/** The options as validated by class-validator; defaults are merged before validation. */
export class SimbaOptionsSchema extends DatabaseOptionsDto implements SimbaModuleOptions {
  @IsPositiveDuration() ttl!: Duration;
  @IsPositiveDuration() transition!: Duration;
  @IsDurationOption() initialDelay!: Duration;
  @IsPositiveDuration() standbyPoll!: Duration;
  @IsOptional() @IsPositiveDuration() statementTimeout?: Duration;
  declare schema: SchemaMode;
  @IsBoolean() autoStart!: boolean;
  @IsBoolean() enabled!: boolean;
}

export const SIMBA_DEFAULTS = {
  tablePrefix: '',
  ttl: '10s',
  transition: '6s',
  initialDelay: 0,
  standbyPoll: '500ms',
  schema: 'check' as SchemaMode,
  autoStart: true,
  enabled: true,
};

/** Options after defaults, validation and parsing: every duration in milliseconds. */
export interface ResolvedSimbaOptions extends HoldfastDatabaseOptions {
  ttl: number;
  transition: number;
  initialDelay: number;
  standbyPoll: number;
  statementTimeout: number;
  autoStart: boolean;
  enabled: boolean;
}

/** Merges defaults, validates (InvalidOptionsError naming option and value) and parses durations. */
export function resolveSimbaOptions(options: SimbaModuleOptions = {}): ResolvedSimbaOptions {
  const merged = { ...SIMBA_DEFAULTS, ...stripUndefined(options) };
  const valid = validateOptions(SimbaOptionsSchema, merged, 'SimbaModule');
  const transition = parseDuration(valid.transition, 'transition');
  const statementTimeout =
    valid.statementTimeout === undefined
      ? Math.max(1, Math.floor(transition / 3))
      : parseDuration(valid.statementTimeout, 'statementTimeout');
  if (statementTimeout >= transition) {
    throw new InvalidOptionsError('SimbaModule', [
      `option 'statementTimeout' = ${JSON.stringify(valid.statementTimeout)}: must be shorter than ` +
        `'transition' (${transition} ms), or an owner could still be waiting on the database after others may acquire`,
    ]);
  }
  return {
    dataSource: options.dataSource,
    tablePrefix: valid.tablePrefix ?? '',
    ttl: parseDuration(valid.ttl, 'ttl'),
    transition,
    initialDelay: parseDuration(valid.initialDelay, 'initialDelay'),
    standbyPoll: parseDuration(valid.standbyPoll, 'standbyPoll'),
    statementTimeout,
    schema: valid.schema,
    dialect: valid.dialect,
    autoStart: valid.autoStart,
    enabled: valid.enabled,
  };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
