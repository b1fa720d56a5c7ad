import {
  DatabaseOptionsDto,
  IsDurationOption,
  NestedOptions,
  ownerInstanceId,
  parseDuration,
  validateOptions,
  type Duration,
} from '@holdfast/core/kit';
import {
  IsBoolean,
  IsDefined,
  IsIn,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  Validate,
  ValidateIf,
  type ValidationArguments,
  type ValidatorConstraintInterface,
  ValidatorConstraint,
} from 'class-validator';
import { LockTimingError } from '../errors';
import { LOCKER_DEFAULTS } from '../locker.constants';
import {
  LOCKER_TYPES,
  SHARED_FILE_MODES,
  STARTUP_MODES,
  type LockerModuleOptions,
  type ResolvedLockerOptions,
} from '../locker.options';
import { DEFAULT_LOCK_TABLE_NAMES, LOCK_IDENTIFIER, type LockTableNames } from '../store/holdfast-lock.table';

/**
 * The keep-alive when none is configured: the seed's documented default for `database` and
 * `shared-file`; the lease must be renewed within one interval, so a third of it for the lease
 * (and for custom lockers, which may be leases).
 */
export function defaultKeepAlivePeriod(type: string, lockAcquireSleepInterval: number): number {
  if (type === 'database') return LOCKER_DEFAULTS.databaseKeepAlive;
  if (type === 'shared-file') return LOCKER_DEFAULTS.sharedFileKeepAlive;
  return Math.max(1, Math.floor(lockAcquireSleepInterval / 3));
}

@ValidatorConstraint({ name: 'isClass' })
class IsClassConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return typeof value === 'function' && typeof (value as { prototype?: unknown }).prototype === 'object';
  }
  defaultMessage(_args: ValidationArguments): string {
    return 'must be a class implementing Locker';
  }
}

@ValidatorConstraint({ name: 'minDuration' })
class MinDurationConstraint implements ValidatorConstraintInterface {
  validate(value: unknown, args: ValidationArguments): boolean {
    if (value === undefined) return true;
    try {
      return parseDuration(value as Duration) >= (args.constraints[0] as number);
    } catch {
      return true; // IsDurationOption reports the malformed value
    }
  }
  defaultMessage(args: ValidationArguments): string {
    return `must be at least ${args.constraints[0]} ms`;
  }
}

/** An option of the shared-file locker that only one of its modes reads. */
@ValidatorConstraint({ name: 'onlyInMode' })
class OnlyInModeConstraint implements ValidatorConstraintInterface {
  validate(_value: unknown, args: ValidationArguments): boolean {
    return ((args.object as { mode?: string }).mode ?? 'os') === args.constraints[0];
  }
  defaultMessage(args: ValidationArguments): string {
    const mode = (args.object as { mode?: string }).mode ?? 'os';
    return `applies to mode '${args.constraints[0]}' only (mode is '${mode}')`;
  }
}

class LockerKindSchema {
  @IsIn(LOCKER_TYPES, { message: `must be one of ${LOCKER_TYPES.join(', ')}` })
  type!: string;
}

class LeaseDatabaseLockerSchema extends LockerKindSchema {
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(250)
  leaseHolderId?: string;

  @IsOptional()
  @IsDurationOption()
  maxAllowableDiffFromDBTime?: Duration;
}

class DatabaseLockerSchema extends LockerKindSchema {}

class SharedFileLockerSchema extends LockerKindSchema {
  @IsString({ message: 'must be a string: the path of a directory every instance shares' })
  @IsNotEmpty({ message: 'must not be empty' })
  directory!: string;

  @IsOptional()
  @IsIn(SHARED_FILE_MODES, { message: `must be one of ${SHARED_FILE_MODES.join(', ')}` })
  mode?: string;

  @ValidateIf((o: SharedFileLockerSchema) => o.lockFile !== undefined)
  @Validate(OnlyInModeConstraint, ['os'])
  @IsString()
  @Matches(/^(?!\.\.?$)[^/\\\0]+$/, { message: 'must be a file name in directory (no path separator)' })
  lockFile?: string;

  @ValidateIf((o: SharedFileLockerSchema) => o.stale !== undefined)
  @Validate(OnlyInModeConstraint, ['mtime'])
  @IsDurationOption()
  @Validate(MinDurationConstraint, [2_000])
  stale?: Duration;
}

class CustomLockerSchema extends LockerKindSchema {
  @Validate(IsClassConstraint)
  useClass!: unknown;
}

const LOCKER_SCHEMAS: Record<string, new () => object> = {
  'lease-database': LeaseDatabaseLockerSchema,
  database: DatabaseLockerSchema,
  'shared-file': SharedFileLockerSchema,
  custom: CustomLockerSchema,
};

const IDENTIFIER_MESSAGE =
  'must be a plain SQL identifier (a letter or _, then letters, digits or _; at most 63 characters)';

class LockColumnsSchema {
  @IsOptional() @IsString() @Matches(LOCK_IDENTIFIER, { message: IDENTIFIER_MESSAGE }) id?: string;
  @IsOptional() @IsString() @Matches(LOCK_IDENTIFIER, { message: IDENTIFIER_MESSAGE }) time?: string;
  @IsOptional() @IsString() @Matches(LOCK_IDENTIFIER, { message: IDENTIFIER_MESSAGE }) brokerName?: string;
}

class LockerModuleOptionsSchema extends DatabaseOptionsDto {
  @IsDefined({
    message: "is required: { type: 'lease-database' | 'database' | 'shared-file' | 'custom', ... }",
  })
  @IsObject()
  @NestedOptions((value) => LOCKER_SCHEMAS[String(value.type)] ?? LockerKindSchema)
  locker!: LockerKindSchema;

  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(64, { message: 'must be at most 64 characters (HOLDFAST_LOCK.ID is VARCHAR(64))' })
  lockName?: string;

  @IsOptional()
  @IsString()
  @Matches(LOCK_IDENTIFIER, { message: IDENTIFIER_MESSAGE })
  lockTableName?: string;

  @IsOptional()
  @IsObject()
  @NestedOptions(() => LockColumnsSchema)
  lockColumns?: LockColumnsSchema;

  @IsOptional()
  @IsDurationOption()
  @Validate(MinDurationConstraint, [1])
  lockAcquireSleepInterval?: Duration;

  @IsOptional()
  @IsBoolean()
  failIfLocked?: boolean;

  @IsOptional()
  @IsDurationOption()
  lockKeepAlivePeriod?: Duration;

  @IsOptional()
  @IsBoolean()
  useLock?: boolean;

  @IsOptional()
  @IsIn(STARTUP_MODES, { message: `must be one of ${STARTUP_MODES.join(', ')}` })
  startup?: string;
}

/**
 * Core's instance id of this process for the first owner of `scope` here, a numbered one for any
 * other (a second application in one process), so two lockers in one process never share a name.
 */
export function defaultInstanceId(scope?: string): string {
  return ownerInstanceId(scope);
}

/**
 * Merges defaults and validates: the one path for forRoot and forRootAsync. Throws
 * InvalidOptionsError naming each bad option and its value, or LockTimingError (lease-database
 * only: the lease lasts one lockAcquireSleepInterval, so the keep-alive must come sooner).
 */
export function resolveLockerOptions(raw: LockerModuleOptions): ResolvedLockerOptions {
  // The class instance is only for validation: dataSource and useClass must stay the caller's objects.
  validateOptions(LockerModuleOptionsSchema, raw, 'LockerModule');
  const interval = parseDuration(
    raw.lockAcquireSleepInterval ?? LOCKER_DEFAULTS.lockAcquireSleepInterval,
    'lockAcquireSleepInterval',
  );
  const locker = raw.locker;
  const keepAlive =
    raw.lockKeepAlivePeriod !== undefined
      ? parseDuration(raw.lockKeepAlivePeriod, 'lockKeepAlivePeriod')
      : defaultKeepAlivePeriod(locker.type, interval);
  const useLock = raw.useLock ?? LOCKER_DEFAULTS.useLock;
  // The database and shared-file lockers hold no lease: any keep-alive period (or none) is valid.
  if (useLock && locker.type === 'lease-database' && (keepAlive === 0 || interval <= keepAlive)) {
    throw new LockTimingError(interval, keepAlive);
  }
  return {
    dataSource: raw.dataSource,
    tablePrefix: raw.tablePrefix ?? LOCKER_DEFAULTS.tablePrefix,
    dialect: raw.dialect,
    schema: raw.schema ?? LOCKER_DEFAULTS.schema,
    locker,
    lockName: raw.lockName ?? LOCKER_DEFAULTS.lockName,
    lockTable: lockTableNames(raw),
    lockAcquireSleepInterval: interval,
    failIfLocked: raw.failIfLocked ?? LOCKER_DEFAULTS.failIfLocked,
    lockKeepAlivePeriod: keepAlive,
    useLock,
    startup: raw.startup ?? LOCKER_DEFAULTS.startup,
    instanceId:
      (locker.type === 'lease-database' && locker.leaseHolderId) ||
      defaultInstanceId(`locker:${raw.lockName ?? LOCKER_DEFAULTS.lockName}`),
    maxAllowableDiffFromDBTime:
      locker.type === 'lease-database' && locker.maxAllowableDiffFromDBTime !== undefined
        ? parseDuration(locker.maxAllowableDiffFromDBTime, 'locker.maxAllowableDiffFromDBTime')
        : 0,
    sharedFileStale:
      locker.type === 'shared-file' && locker.mode === 'mtime' && locker.stale !== undefined
        ? parseDuration(locker.stale, 'locker.stale')
        : LOCKER_DEFAULTS.sharedFileStale,
  };
}

/** The configured lock table and column names (validated identifiers), defaults where none is given. */
function lockTableNames(raw: LockerModuleOptions): LockTableNames {
  if (raw.lockTableName === undefined && raw.lockColumns === undefined) return DEFAULT_LOCK_TABLE_NAMES;
  return {
    table: raw.lockTableName ?? DEFAULT_LOCK_TABLE_NAMES.table,
    id: raw.lockColumns?.id ?? DEFAULT_LOCK_TABLE_NAMES.id,
    time: raw.lockColumns?.time ?? DEFAULT_LOCK_TABLE_NAMES.time,
    brokerName: raw.lockColumns?.brokerName ?? DEFAULT_LOCK_TABLE_NAMES.brokerName,
  };
}
