import {
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Min,
  registerDecorator,
  ValidateIf,
  type ValidationOptions,
} from 'class-validator';
import {
  DatabaseOptionsDto,
  InvalidOptionsError,
  IsDurationOption,
  NestedOptions,
  isValidTablePrefix,
  parseDuration,
  validateOptions,
} from '@holdfast/core/kit';
import { isValidCron } from '../cleanup/schedule-cron';
import { resolveCipher } from '../payload/payload-cipher';
import type { FailoverModuleOptions, ResolvedFailoverOptions } from '../failover.options';

function IsCron(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isCron',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: "must be a cron expression such as '0 0 * * * *'", ...options },
      validator: {
        validate: (value: unknown) => isValidCron(value),
      },
    });
}

function IsPayloadClass(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isPayloadClass',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: "must list classes, or { name: 'qualified.Name', type: Class }", ...options },
      validator: {
        validate: (value: unknown) =>
          typeof value === 'function' ||
          (typeof value === 'object' &&
            value !== null &&
            typeof (value as { name?: unknown }).name === 'string' &&
            (value as { name: string }).name !== '' &&
            typeof (value as { type?: unknown }).type === 'function'),
      },
    });
}

function IsClassOrInstance(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isClassOrInstance',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: 'must be a class or an instance of one', ...options },
      validator: {
        validate: (value: unknown) =>
          typeof value === 'function' || (typeof value === 'object' && value !== null),
      },
    });
}

class MemoryStoreSchema {
  @IsIn(['memory']) type!: string;
  @IsOptional() @IsInt() @Min(1) maxEntries?: number;
}

class EncryptionSchema {
  @IsBoolean() enabled!: boolean;
  @IsOptional()
  @ValidateIf((o) => typeof o.cipher === 'string')
  @IsIn(['aes-256-gcm'])
  cipher?: unknown;
  // `key` is checked in resolveFailoverOptions, so that no message ever prints it.
}

class SqlStoreSchema extends DatabaseOptionsDto {
  @IsIn(['sql']) type!: string;
  @IsOptional() @IsArray() @IsString({ each: true }) allowedPayloadClasses?: string[];
  @IsOptional() @IsBoolean() strictAllowlist?: boolean;
  @IsOptional() @IsClassOrInstance() queryResolver?: unknown;
  @IsOptional() @IsClassOrInstance() payloadColumnResolver?: unknown;
  @IsOptional() @IsClassOrInstance() databaseResolver?: unknown;
  @IsOptional() @NestedOptions(() => EncryptionSchema) encryption?: unknown;
}

class CustomStoreSchema {
  @IsIn(['custom']) type!: string;
  @ValidateIf((o) => o.useExisting === undefined)
  @IsClassOrInstance({ message: "a custom store needs 'useClass' (a class) or 'useExisting' (a token)" })
  useClass?: unknown;
}

class UnknownStoreSchema {
  @IsIn(['memory', 'sql', 'custom']) type!: string;
}

class CleanupSchema {
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsOptional() @IsCron() cron?: string;
  @IsOptional() @IsInt() @Min(1) batchSize?: number;
  @IsOptional() @IsDurationOption() pause?: unknown;
}

class AsyncWriteSchema {
  @IsOptional() @IsInt() @Min(1) maxQueue?: number;
  @IsOptional() @IsDurationOption() flushInterval?: unknown;
  @IsOptional() @IsInt() @Min(1) maxBatch?: number;
  @IsOptional() @IsIn(['drop-oldest', 'drop-new', 'caller-runs']) rejection?: string;
}

class CircuitBreakerSchema {
  @IsOptional() @IsInt() @Min(1) consecutiveFailures?: number;
  @IsOptional() @IsDurationOption() halfOpenAfter?: unknown;
}

class ExecutionSchema {
  @IsOptional() @NestedOptions(() => CircuitBreakerSchema) circuitBreaker?: unknown;
}

class ScatterSchema {
  @IsOptional() @IsBoolean() parallel?: boolean;
  @IsOptional() @IsDurationOption() timeout?: unknown;
}

function IsFunction(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isFunction',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: 'must be a function', ...options },
      validator: { validate: (value: unknown) => typeof value === 'function' },
    });
}

class MultiTenantSchema {
  @IsOptional() @IsString() defaultTenant?: string;
  @IsOptional() @IsBoolean() strict?: boolean;
  @IsOptional() @IsFunction() resolveTenant?: unknown;
  @IsOptional() @IsString() clsKey?: string;
  // `tenants` is checked entry by entry in resolveFailoverOptions.
}

/** What `FailoverModule.forRoot()` accepts, as class-validator checks it. */
export class FailoverOptionsSchema {
  @IsOptional()
  @NestedOptions((v) =>
    v.type === 'memory'
      ? MemoryStoreSchema
      : v.type === 'sql'
        ? SqlStoreSchema
        : v.type === 'custom'
          ? CustomStoreSchema
          : UnknownStoreSchema,
  )
  store?: unknown;
  @IsOptional() @NestedOptions(() => AsyncWriteSchema) async?: unknown;
  @IsOptional() @NestedOptions(() => ExecutionSchema) execution?: unknown;
  @IsOptional() @NestedOptions(() => ScatterSchema) scatter?: unknown;
  @IsOptional() @NestedOptions(() => MultiTenantSchema) multiTenant?: unknown;
  @IsOptional() @IsIn(['rethrow', 'never-throw']) exceptionPolicy?: string;
  @IsOptional() @IsIn(['java', 'injective']) keys?: string;
  @IsOptional() @NestedOptions(() => CleanupSchema) cleanup?: unknown;
  @IsOptional() @IsClassOrInstance() recoveredPayloadHandler?: unknown;
  @IsOptional() @IsArray() @IsPayloadClass({ each: true }) types?: unknown[];
  @IsOptional() @IsDurationOption() storeTimeout?: unknown;
}

export const DEFAULT_CLEANUP_CRON = '0 0 * * * *';
export const DEFAULT_STORE_TIMEOUT = '500ms';

/** Validates the options (naming each bad one) and fills the defaults. */
export function resolveFailoverOptions(options: FailoverModuleOptions = {}): ResolvedFailoverOptions {
  const asyncOption = options.async;
  const problems = problemsBeforeSchema(options);
  if (problems.length) throw new InvalidOptionsError('FailoverModule', problems);
  validateOptions(
    FailoverOptionsSchema,
    { ...options, async: typeof asyncOption === 'object' ? asyncOption : undefined },
    'FailoverModule',
  );
  const write = typeof asyncOption === 'object' ? asyncOption : {};
  return {
    store: options.store ?? { type: 'memory' },
    async:
      asyncOption === false
        ? false
        : {
            maxQueue: write.maxQueue ?? 10_000,
            flushInterval: parseDuration(write.flushInterval ?? 100, 'async.flushInterval'),
            maxBatch: write.maxBatch ?? 500,
            rejection: write.rejection ?? 'drop-oldest',
          },
    execution: options.execution,
    scatter: {
      parallel: options.scatter?.parallel ?? false,
      timeout: parseDuration(options.scatter?.timeout ?? '10s', 'scatter.timeout'),
    },
    multiTenant: options.multiTenant,
    exceptionPolicy: options.exceptionPolicy ?? 'rethrow',
    keys: options.keys ?? 'java',
    cleanup: {
      enabled: options.cleanup?.enabled ?? true,
      cron: options.cleanup?.cron ?? DEFAULT_CLEANUP_CRON,
      batchSize: options.cleanup?.batchSize,
      pause: parseDuration(options.cleanup?.pause ?? 0, 'cleanup.pause'),
    },
    recoveredPayloadHandler: options.recoveredPayloadHandler,
    types: options.types ?? [],
    storeTimeout: parseDuration(options.storeTimeout ?? DEFAULT_STORE_TIMEOUT, 'storeTimeout'),
  };
}

/** What the schema cannot say: the shape of `async`, the tenants' prefixes, the encryption key and cipher. */
function problemsBeforeSchema(options: FailoverModuleOptions): string[] {
  const problems: string[] = [];
  const asyncOption = options.async;
  if (
    asyncOption !== undefined &&
    typeof asyncOption !== 'boolean' &&
    (typeof asyncOption !== 'object' || asyncOption === null)
  ) {
    problems.push(
      `option 'async' = ${JSON.stringify(asyncOption)}: must be a boolean or an object of write-behind settings`,
    );
  }
  const tenants = options.multiTenant?.tenants;
  if (options.multiTenant) {
    if (!tenants || typeof tenants !== 'object' || Object.keys(tenants).length === 0) {
      problems.push(`option 'multiTenant.tenants' must list at least one tenant: { name: { tablePrefix } }`);
    } else {
      for (const [name, tenant] of Object.entries(tenants)) {
        if (!isValidTablePrefix(tenant?.tablePrefix)) {
          problems.push(
            `option 'multiTenant.tenants.${name}.tablePrefix' = ${JSON.stringify(tenant?.tablePrefix)}: must match ([A-Za-z0-9_]+\\.)*[A-Za-z0-9_]*`,
          );
        }
      }
    }
  }
  const encryption = options.store?.type === 'sql' ? options.store.encryption : undefined;
  if (encryption?.enabled) {
    try {
      resolveCipher(encryption);
    } catch (error) {
      problems.push(`option 'store.encryption': ${(error as Error).message}`);
    }
  }
  return problems;
}
