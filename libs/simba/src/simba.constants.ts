export const SIMBA_RESOLVED_OPTIONS = Symbol('SIMBA_RESOLVED_OPTIONS');
export const ON_MUTEX_ACQUIRED = 'holdfast:simba:on-mutex-acquired';
export const ON_MUTEX_RELEASED = 'holdfast:simba:on-mutex-released';
export const LEADER_ONLY = 'holdfast:simba:leader-only';
export const MUTEX_CONTENDER_PROVIDER = 'holdfast:simba:mutex-contender-provider';
