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
import { validateCronExpression } from 'cron';
import {
  DIALECTS,
  IsDataSourceOption,
  IsTablePrefix,
  NestedOptions,
  SCHEMA_MODES,
  validateOptions,
} from '@holdfast/core';
import type { FailoverModuleOptions, ResolvedFailoverModuleOptions } from './failover-module.options';

function IsCron(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isCron',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: "must be a cron expression such as '0 0 * * * *'", ...options },
      validator: {
        validate: (value: unknown) => typeof value === 'string' && validateCronExpression(value).valid,
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

class MemoryStoreValidation {
  @IsIn(['memory']) type!: string;
  @IsOptional() @IsInt() @Min(1) maxEntries?: number;
}

class SqlStoreValidation {
  @IsIn(['sql']) type!: string;
  @IsOptional() @IsDataSourceOption() dataSource?: unknown;
  @IsOptional() @IsTablePrefix() tablePrefix?: string;
  @IsOptional() @IsArray() @IsString({ each: true }) allowedPayloadClasses?: string[];
  @IsOptional() @IsBoolean() strictAllowlist?: boolean;
  @IsOptional() @IsIn(DIALECTS as unknown as string[]) dialect?: string;
  @IsOptional() @IsIn(SCHEMA_MODES as unknown as string[]) schema?: string;
  @IsOptional() @IsClassOrInstance() queryResolver?: unknown;
  @IsOptional() @IsClassOrInstance() payloadColumnResolver?: unknown;
  @IsOptional() @IsClassOrInstance() databaseResolver?: unknown;
}

class CustomStoreValidation {
  @IsIn(['custom']) type!: string;
  @ValidateIf((o) => o.useExisting === undefined)
  @IsClassOrInstance({ message: "a custom store needs 'useClass' (a class) or 'useExisting' (a token)" })
  useClass?: unknown;
}

class UnknownStoreValidation {
  @IsIn(['memory', 'sql', 'custom']) type!: string;
}

class CleanupValidation {
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsOptional() @IsCron() cron?: string;
}

class FailoverModuleOptionsValidation {
  @IsOptional()
  @NestedOptions((v) =>
    v.type === 'memory'
      ? MemoryStoreValidation
      : v.type === 'sql'
        ? SqlStoreValidation
        : v.type === 'custom'
          ? CustomStoreValidation
          : UnknownStoreValidation,
  )
  store?: unknown;
  @IsOptional() @IsBoolean() async?: boolean;
  @IsOptional() @IsInt() @Min(1) maxPendingWrites?: number;
  @IsOptional() @IsIn(['rethrow', 'never-throw']) exceptionPolicy?: string;
  @IsOptional() @NestedOptions(() => CleanupValidation) cleanup?: unknown;
  @IsOptional() @IsClassOrInstance() recoveredPayloadHandler?: unknown;
}

export const DEFAULT_CLEANUP_CRON = '0 0 * * * *';

/** Validates the options (naming each bad one) and fills the defaults. */
export function resolveFailoverOptions(options: FailoverModuleOptions = {}): ResolvedFailoverModuleOptions {
  validateOptions(FailoverModuleOptionsValidation, options, 'FailoverModule');
  return {
    store: options.store ?? { type: 'memory' },
    async: options.async ?? true,
    maxPendingWrites: options.maxPendingWrites ?? 10_000,
    exceptionPolicy: options.exceptionPolicy ?? 'rethrow',
    cleanup: {
      enabled: options.cleanup?.enabled ?? true,
      cron: options.cleanup?.cron ?? DEFAULT_CLEANUP_CRON,
    },
    recoveredPayloadHandler: options.recoveredPayloadHandler,
  };
}
