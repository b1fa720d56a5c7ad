export const DASHBOARD_OPTIONS = Symbol('HOLDFAST_DASHBOARD_OPTIONS');
/** The user's guard for admin actions, or null (read-only dashboard). */
export const DASHBOARD_ACTION_GUARD = Symbol('HOLDFAST_DASHBOARD_ACTION_GUARD');
