import { createRequire } from 'node:module';

/**
 * The `cron` package that @nestjs/schedule itself depends on, loaded from beside it: Holdfast
 * validates cleanup expressions and reads their period with the very parser that schedules
 * them, and ships no second copy of its own.
 */
const cron = createRequire(require.resolve('@nestjs/schedule'))('cron') as CronPackage;

/** The two things Holdfast uses of `cron` (typed here: the package is @nestjs/schedule's, not ours). */
interface CronPackage {
  validateCronExpression(expression: string): { valid: boolean };
  CronTime: new (expression: string) => { sendAt(count: number): unknown };
}

export function isValidCron(expression: unknown): boolean {
  return typeof expression === 'string' && cron.validateCronExpression(expression).valid;
}

/** Milliseconds between the next two firings of a cron expression. */
export function cronPeriodMillis(expression: string): number {
  const [first, second] = new cron.CronTime(expression).sendAt(2) as unknown as Array<{ toMillis(): number }>;
  return second.toMillis() - first.toMillis();
}
