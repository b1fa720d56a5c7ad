import { EventEmitter } from 'node:events';

/**
 * In-process signal that a mutex was released, so standbys in the same process try at once
 * instead of at their next poll. Other processes notice the release through their standby poll.
 */
export class MutexWakeup {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  notifyReleased(mutex: string): void {
    this.emitter.emit(mutex);
  }

  subscribe(mutex: string, listener: () => void): () => void {
    this.emitter.on(mutex, listener);
    return () => this.emitter.off(mutex, listener);
  }
}
