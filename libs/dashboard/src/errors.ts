import { HoldfastError } from '@holdfast/core/kit';

/** `path` is not a URL path the dashboard can be served at. */
export class InvalidDashboardPathError extends HoldfastError {
  constructor(readonly path: unknown) {
    super(
      `HoldfastDashboardModule: path ${JSON.stringify(path)} is not a URL path. Pass a string that ` +
        `starts with '/' and holds only letters, digits and - _ . ~ / (for example '/holdfast', or '/' for the root).`,
      'HOLDFAST_DASHBOARD_INVALID_PATH',
    );
  }
}

/** `guard` is neither a CanActivate class nor an object with a canActivate method. */
export class InvalidDashboardGuardError extends HoldfastError {
  constructor(readonly guard: unknown) {
    super(
      `HoldfastDashboardModule: guard must be a CanActivate class or an object with a canActivate(context) ` +
        `method, got ${guard === null ? 'null' : typeof guard}. Leave it out for a read-only dashboard.`,
      'HOLDFAST_DASHBOARD_INVALID_GUARD',
    );
  }
}

/** `guardReads` is not a boolean, or is true without a guard to apply. */
export class InvalidDashboardReadsError extends HoldfastError {
  constructor(problem: string) {
    super(`HoldfastDashboardModule: guardReads ${problem}.`, 'HOLDFAST_DASHBOARD_INVALID_GUARD_READS');
  }
}

/** The longest value an error quotes (a request may carry a thousand ids). */
const QUOTED = 120;

/** `text` cut to `max` characters, an ellipsis marking the cut. */
function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A value as an error quotes it: JSON, a long list by its first three items and its length, cut at QUOTED. */
function quoted(value: unknown): string {
  if (Array.isArray(value) && value.length > 3) {
    const first = value.slice(0, 3).map((item) => cut(JSON.stringify(item) ?? String(item), QUOTED / 3));
    return `[${first.join(', ')}, … (${value.length} items)]`;
  }
  return cut(JSON.stringify(value) ?? String(value), QUOTED);
}

/** An inbox action the dashboard does not know, or a request without a message id. */
export class InvalidDashboardActionError extends HoldfastError {
  constructor(what: string, value: unknown, expected: string) {
    super(`Holdfast dashboard: ${what} ${quoted(value)} ${expected}.`, 'HOLDFAST_DASHBOARD_INVALID_ACTION');
  }
}
