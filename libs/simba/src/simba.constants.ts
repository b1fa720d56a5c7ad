import type { SchemaMode } from '@holdfast/core/kit';

export const ON_MUTEX_ACQUIRED = 'holdfast:simba:on-mutex-acquired';
export const ON_MUTEX_RELEASED = 'holdfast:simba:on-mutex-released';
export const LEADER_ONLY = 'holdfast:simba:leader-only';
export const MUTEX_CONTENDER_PROVIDER = 'holdfast:simba:mutex-contender-provider';

/** SimbaModule's defaults, merged under the options given before they are validated. */
export const SIMBA_DEFAULTS = {
  tablePrefix: '',
  ttl: '10s',
  transition: '6s',
  initialDelay: 0,
  standbyPoll: '500ms',
  schema: 'check' as SchemaMode,
  autoStart: true,
  enabled: true,
  spread: [] as string[],
};
