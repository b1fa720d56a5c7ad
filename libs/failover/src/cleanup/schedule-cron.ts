import { createRequire } from 'node:module';
import type * as Cron from 'cron';

/**
 * The `cron` package that @nestjs/schedule itself depends on, loaded from beside it: Holdfast
 * validates cleanup expressions and reads their period with the very parser that schedules
 * them, and ships no second copy of its own.
 */
const cron = createRequire(require.resolve('@nestjs/schedule'))('cron') as typeof Cron;

export function isValidCron(expression: unknown): boolean {
  return typeof expression === 'string' && cron.validateCronExpression(expression).valid;
}

/** Milliseconds between the next two firings of a cron expression. */
export function cronPeriodMillis(expression: string): number {
  const [first, second] = new cron.CronTime(expression).sendAt(2) as unknown as Array<{ toMillis(): number }>;
  return second.toMillis() - first.toMillis();
}
