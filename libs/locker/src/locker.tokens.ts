/** The options given to `LockerModule.forRoot` / `forRootAsync`, as given. */
export const LOCKER_MODULE_OPTIONS = Symbol('holdfast:locker:module-options');
/** The validated options with defaults applied (ResolvedLockerOptions). */
export const LOCKER_OPTIONS = Symbol('holdfast:locker:options');
/** The options given to `ScheduledLockModule.forRoot` / `forRootAsync`, as given. */
export const SCHEDULED_LOCK_MODULE_OPTIONS = Symbol('holdfast:locker:scheduled-lock-module-options');
/** The validated ScheduledLockModule options with defaults applied (ResolvedScheduledLockModuleOptions). */
export const SCHEDULED_LOCK_OPTIONS = Symbol('holdfast:locker:scheduled-lock-options');
