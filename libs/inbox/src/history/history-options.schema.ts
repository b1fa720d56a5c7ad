import { IsDurationOption, type Duration } from '@holdfast/core/kit';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

/** `history` of `InboxModule.forRoot()`, as class-validator checks it (with its defaults). */
export class InboxHistoryOptionsSchema {
  @IsOptional() @IsDurationOption() retention: Duration = '7d';
  @IsOptional() @IsInt() @Min(1) @Max(100_000_000) maxRows = 100_000;
  @IsOptional() @IsDurationOption() flushInterval: Duration = '1s';
  @IsOptional() @IsInt() @Min(1) @Max(1_000_000) maxBuffered = 10_000;
}

/** `stats` of `InboxModule.forRoot()`, as class-validator checks it (with its defaults). */
export class InboxStatsOptionsSchema {
  @IsOptional() @IsDurationOption() retention: Duration = '24h';
}

/** `true` is the defaults, `false` or nothing is off; an object is merged over the defaults. */
export function historyOption<T extends object>(value: unknown, schema: new () => T): unknown {
  if (value === true) return new schema();
  if (value === false || value === undefined) return undefined;
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const given = Object.entries(value).filter(([, v]) => v !== undefined);
    return Object.assign(new schema(), Object.fromEntries(given));
  }
  return value;
}
