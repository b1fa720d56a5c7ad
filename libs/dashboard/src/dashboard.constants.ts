export const DASHBOARD_OPTIONS = Symbol('HOLDFAST_DASHBOARD_OPTIONS');
/** The user's guard for admin actions, or null (read-only dashboard). */
export const DASHBOARD_ACTION_GUARD = Symbol('HOLDFAST_DASHBOARD_ACTION_GUARD');
/** forRoot's `guardReads`: the user's guard also stands on the page and the state API. */
export const DASHBOARD_GUARD_READS = Symbol('HOLDFAST_DASHBOARD_GUARD_READS');
/** The header every action must carry (lower case, as Node hands headers over). */
export const DASHBOARD_REQUEST_HEADER = 'x-holdfast-request';
/** The dashboard's path below the application's global prefix, as its controller has it ('' for the root). */
export const DASHBOARD_PATH = Symbol('HOLDFAST_DASHBOARD_PATH');
