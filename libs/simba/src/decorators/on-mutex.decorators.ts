import { assertUserMutexName } from '../mutex/mutex-contender';
import { ON_MUTEX_ACQUIRED, ON_MUTEX_RELEASED } from '../simba.constants';

function appendMutex(key: string, mutex: string): MethodDecorator {
  assertUserMutexName(mutex);
  return (_target, _key, descriptor) => {
    const fn = descriptor.value as object;
    const list: string[] = Reflect.getMetadata(key, fn) ?? [];
    Reflect.defineMetadata(key, [...list, mutex], fn);
    return descriptor;
  };
}

/** Calls the method with the MutexState when this application instance acquires `mutex`. */
export function OnMutexAcquired(mutex: string): MethodDecorator {
  return appendMutex(ON_MUTEX_ACQUIRED, mutex);
}

/** Calls the method with the MutexState when this application instance stops owning `mutex`. */
export function OnMutexReleased(mutex: string): MethodDecorator {
  return appendMutex(ON_MUTEX_RELEASED, mutex);
}
