import {
  DIALECTS,
  IsDataSourceOption,
  IsDurationOption,
  IsTablePrefix,
  NestedOptions,
  SCHEMA_MODES,
  type DataSourceOption,
  type Dialect,
  type Duration,
  type SchemaMode,
  validateOptions,
} from '@holdfast/core/kit';
import { Type } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Max,
  Min,
  ValidateNested,
  ValidateBy,
  IsBoolean,
  IsObject,
} from 'class-validator';
import { defaultTtlToIso } from '../acceptor/ttl';
import type { InboxMessage } from '../inbox-message';
import {
  historyOption,
  InboxHistoryOptionsSchema,
  InboxStatsOptionsSchema,
} from '../history/history-options.schema';

import type { BatchMode, ClusterMode, InboxModuleOptions, InboxRateLimits } from '../inbox.options';

const isFunction = (name: string) =>
  ValidateBy({
    name,
    validator: {
      validate: (value: unknown) => typeof value === 'function',
      defaultMessage: () => 'must be a function',
    },
  });

/** `retry` of `InboxModule.forRoot()`, as class-validator checks it (with its defaults). */
export class InboxRetryOptionsSchema {
  @IsOptional() @IsInt() @Min(0) maxRetries = 5;
  @IsOptional() @IsDurationOption() initialDelay: Duration = '1s';
  @IsOptional() @IsNumber() @Min(1) multiplier = 2;
  @IsOptional() @IsDurationOption() maxDelay: Duration = '3h';
  @IsOptional() @IsNumber() @Min(0) @Max(1) jitter = 0.2;
}

/** `fairShare` of `InboxModule.forRoot()`. */
export class InboxFairShareOptionsSchema {
  @IsInt() @Min(1) @Max(10_000) perKey!: number;
}

/**
 * What `InboxModule.forRoot()` accepts, as class-validator checks it, with every default: a
 * validated instance is the ResolvedInboxOptions the inbox's services get.
 */
export class InboxOptionsSchema {
  @IsOptional() @IsDataSourceOption() dataSource?: DataSourceOption;
  @IsOptional() @IsIn([...DIALECTS]) dialect?: Dialect;
  @IsOptional() @IsTablePrefix() tablePrefix = '';
  @IsOptional() @IsIn(SCHEMA_MODES as SchemaMode[]) schema: SchemaMode = 'check';
  @IsOptional() @IsDurationOption() pollInterval: Duration = '1s';
  @IsOptional() @IsInt() @Min(1) @Max(10_000) batchSize = 100;
  @IsOptional() @IsIn(['fail-first', 'all']) batchMode: BatchMode = 'fail-first';
  @IsOptional() @isFunction('isGroupBy') groupBy?: (message: InboxMessage) => string;
  @IsOptional() @IsBoolean() priorities = false;
  @IsOptional() @NestedOptions(() => InboxFairShareOptionsSchema) fairShare?: InboxFairShareOptionsSchema;
  /** Checked entry by entry at startup (resolveRateLimits: InboxRateLimitError). */
  @IsOptional() @IsObject() rateLimits?: InboxRateLimits;
  @IsOptional() @ValidateNested() @Type(() => InboxRetryOptionsSchema) retry: InboxRetryOptionsSchema =
    new InboxRetryOptionsSchema();
  @IsOptional()
  @ValidateBy({
    name: 'isTtl',
    validator: {
      validate: (value: unknown) => {
        try {
          defaultTtlToIso(value as Duration);
          return true;
        } catch {
          return false;
        }
      },
      defaultMessage: () =>
        "must be an ISO-8601 duration ('PT10M') or a duration (ms or '10m') greater than 0",
    },
  })
  defaultTtl?: Duration;
  @IsOptional() @IsIn(['leader', 'competing']) cluster?: ClusterMode;
  @IsOptional() @IsDurationOption() visibilityTimeout: Duration = '5m';
  @IsOptional() @IsDurationOption() handlerTimeout?: Duration;
  @IsOptional() @IsInt() @Min(1) @Max(10_000) concurrency?: number;
  @IsOptional() @IsInt() @Min(1) @Max(10_000) completionBatchSize?: number;
  @IsOptional() @IsDurationOption() completionFlushInterval: Duration = '10ms';
  @IsOptional() @IsDurationOption() idleInTransactionTimeout: Duration = '30s';
  @IsOptional() @IsDurationOption() statementTimeout: Duration = '10s';
  @IsOptional() @IsDurationOption() cleanupInterval: Duration = '1m';
  @IsOptional() @IsDurationOption() shutdownGrace: Duration = '10s';
  @IsOptional() @IsBoolean() wakeOnAccept = true;
  @IsOptional() @IsBoolean() notify?: boolean;
  @IsOptional()
  @ValidateBy(
    {
      name: 'isPostgresUrl',
      validator: { validate: (v) => typeof v === 'string' && /^postgres(ql)?:\/\/\S+$/.test(v) },
    },
    { message: 'must be a postgres:// or postgresql:// URL' },
  )
  notifyListenUrl?: string;
  @IsOptional() @IsDurationOption() notifyCheckInterval: Duration = '30s';
  @IsOptional() @IsInt() @Min(1) @Max(100_000) cleanupChunkSize = 5000;
  @IsOptional() @IsInt() @Min(1) @Max(5_000) acceptChunkSize = 500;
  @IsOptional() @IsDurationOption() unhandledDelay: Duration = '1m';
  @IsOptional()
  @ValidateBy(
    { name: 'isBool', validator: { validate: (v) => typeof v === 'boolean' } },
    {
      message: 'must be true or false',
    },
  )
  deliver = true;
  @IsOptional() @IsString() leaderMutex = 'holdfast-inbox';
  @IsOptional() @IsIn([true, false, 'when-present']) traceContext: boolean | 'when-present' = false;
  @IsOptional() @isFunction('isClock') clock?: () => number | Promise<number>;
  @IsOptional() @ValidateNested() @Type(() => InboxHistoryOptionsSchema) history?: InboxHistoryOptionsSchema;
  @IsOptional() @ValidateNested() @Type(() => InboxStatsOptionsSchema) stats?: InboxStatsOptionsSchema;
}

/** Defaults merged and validated in one place, for forRoot and forRootAsync alike. */
export function resolveInboxOptions(options: InboxModuleOptions): InboxOptionsSchema {
  const plain = Object.fromEntries(Object.entries(options ?? {}).filter(([, v]) => v !== undefined));
  if (plain.retry && typeof plain.retry === 'object') {
    const given = Object.entries(plain.retry).filter(([, v]) => v !== undefined);
    plain.retry = Object.assign(new InboxRetryOptionsSchema(), Object.fromEntries(given));
  }
  plain.history = historyOption(plain.history, InboxHistoryOptionsSchema);
  plain.stats = historyOption(plain.stats, InboxStatsOptionsSchema);
  if (plain.history === undefined) delete plain.history;
  if (plain.stats === undefined) delete plain.stats;
  return validateOptions(InboxOptionsSchema, plain, 'InboxModule');
}
