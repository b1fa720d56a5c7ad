import { CronTime, validateCronExpression } from 'cron';

/*
 * `cron` is a dependency of its own (the range @nestjs/schedule uses, so npm installs one copy):
 * Holdfast validates cleanup expressions and reads their period with the parser that schedules
 * them, and declares what it loads instead of reaching into @nestjs/schedule's node_modules.
 */

export function isValidCron(expression: unknown): boolean {
  return typeof expression === 'string' && validateCronExpression(expression).valid;
}

/** Milliseconds between the next two firings of a cron expression. */
export function cronPeriodMillis(expression: string): number {
  const [first, second] = new CronTime(expression).sendAt(2);
  return second.toMillis() - first.toMillis();
}

/** Milliseconds until the next firing of a cron expression (at least 1). */
export function cronDelayMillis(expression: string): number {
  return Math.max(1, new CronTime(expression).getTimeout());
}
