import type * as Failover from '@holdfast/failover';
import type * as Inbox from '@holdfast/inbox';
import type * as Locker from '@holdfast/locker';
import type * as Simba from '@holdfast/simba';

/**
 * The Holdfast modules are optional peers of the dashboard: an application installs those it
 * uses, and the dashboard shows those. Each is required on first use, never at import, and a
 * package that is not installed is simply absent (any other failure to load it is thrown).
 */
export interface HoldfastModules {
  failover?: typeof Failover;
  inbox?: typeof Inbox;
  locker?: typeof Locker;
  simba?: typeof Simba;
}

function isMissing(error: unknown, specifier: string): boolean {
  const e = error as { code?: string; message?: string };
  return (
    e?.code === 'MODULE_NOT_FOUND' && typeof e.message === 'string' && e.message.includes(`'${specifier}'`)
  );
}

function optionalPackage<T>(name: string): T | undefined {
  try {
    /* eslint-disable @typescript-eslint/no-require-imports */
    return require(name) as T;
    /* eslint-enable @typescript-eslint/no-require-imports */
  } catch (error) {
    if (isMissing(error, name)) return undefined;
    throw error;
  }
}

let loaded: HoldfastModules | undefined;

/** The Holdfast packages installed beside the dashboard (loaded once). */
export function holdfastModules(): HoldfastModules {
  return (loaded ??= {
    failover: optionalPackage('@holdfast/failover'),
    inbox: optionalPackage('@holdfast/inbox'),
    locker: optionalPackage('@holdfast/locker'),
    simba: optionalPackage('@holdfast/simba'),
  });
}
