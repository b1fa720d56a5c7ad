import {
  DatabaseOptionsDto,
  InvalidOptionsError,
  IsDurationOption,
  parseDuration,
  validateOptions,
  type Duration,
  type SchemaMode,
} from '@holdfast/core/kit';
import {
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsNotEmpty,
  IsOptional,
  IsString,
  ValidateBy,
  type ValidationOptions,
} from 'class-validator';
import { SIMBA_DEFAULTS } from '../simba.constants';
import type { ResolvedSimbaOptions, SimbaModuleOptions } from '../simba.options';

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
  @IsArray() @ArrayUnique() @IsString({ each: true }) @IsNotEmpty({ each: true }) spread!: string[];
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
    spread: [...valid.spread],
  };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
