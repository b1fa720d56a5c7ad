import { IsBoolean, IsInt, IsOptional, IsString, Max, Min, MinLength } from 'class-validator';
import { IsDurationOption, parseDuration, validateOptions, type Duration } from '@holdfast/core/kit';

/** What the dashboard shows and how often the page refreshes. `path` and `guard` are forRoot extras. */
export interface HoldfastDashboardOptions {
  /** How often the page polls its state endpoint (default '3s'). */
  pollInterval?: Duration;
  /** The page's title (default 'Holdfast'). */
  title?: string;
  /** How many parked and paused messages the page lists (default 50). */
  messageLimit?: number;
  /**
   * Show error texts whole: stack traces and absolute file paths (default false: the first line,
   * with each absolute path cut to its file name). For a dashboard only operators can reach.
   */
  errorDetails?: boolean;
}

class DashboardOptionsDto {
  @IsOptional() @IsDurationOption() pollInterval?: Duration;
  @IsOptional() @IsString() @MinLength(1) title?: string;
  @IsOptional() @IsInt() @Min(1) @Max(1000) messageLimit?: number;
  @IsOptional() @IsBoolean() errorDetails?: boolean;
}

export interface ResolvedDashboardOptions {
  pollIntervalMs: number;
  title: string;
  messageLimit: number;
  errorDetails: boolean;
}

export function resolveDashboardOptions(options: HoldfastDashboardOptions = {}): ResolvedDashboardOptions {
  const valid = validateOptions(DashboardOptionsDto, options, 'HoldfastDashboardModule');
  return {
    pollIntervalMs: Math.max(500, parseDuration(valid.pollInterval ?? '3s')),
    title: valid.title ?? 'Holdfast',
    messageLimit: valid.messageLimit ?? 50,
    errorDetails: valid.errorDetails ?? false,
  };
}
