/** The options given to `SimbaModule.forRoot` / `forRootAsync`, as given. */
export const SIMBA_MODULE_OPTIONS = Symbol('holdfast:simba:module-options');
/** The validated options with defaults applied (ResolvedSimbaOptions). */
export const SIMBA_OPTIONS = Symbol('holdfast:simba:options');
