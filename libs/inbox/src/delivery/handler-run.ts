import { withTimeout } from '@holdfast/core/kit';
import { Semaphore } from 'async-mutex';
import type { RegisteredHandler } from '../handler/inbox-handler.registry';

/**
 * Handler concurrency: one limit for the node, and one per handler that declares its own
 * (`@InboxHandler({ concurrency })`).
 */
export class HandlerSlots {
  private readonly node: Semaphore;
  private readonly perHandler = new Map<RegisteredHandler, Semaphore>();

  constructor(concurrency: number) {
    this.node = new Semaphore(concurrency);
  }

  /**
   * Waits for a slot of the handler (its own limit first), then one of the node. The delivery
   * gives the handler's slot back when the call ends and the node's when its message is deleted,
   * so that the messages in a node's hands (running, or delivered and not yet deleted: what a
   * crash delivers again) never outnumber its concurrency.
   */
  async acquire(handler: RegisteredHandler): Promise<{ handler: () => void; node: () => void }> {
    let own: Semaphore | undefined;
    if (handler.concurrency !== undefined) {
      own = this.perHandler.get(handler);
      if (!own) this.perHandler.set(handler, (own = new Semaphore(handler.concurrency)));
    }
    const [, releaseOwn] = own ? await own.acquire() : [0, () => undefined];
    const [, release] = await this.node.acquire();
    return { handler: releaseOwn, node: release };
  }
}

/**
 * Waits for the handler at most `ms` (0: no limit), or until its signal aborts (claim lost,
 * shutdown). A handler that takes longer counts as a failed attempt (with backoff, then parking),
 * so a stuck message cannot hold the loop; its signal aborts with the timeout error:
 * `HandlerTimeoutError` when `handlerTimeout` was set, else `VisibilityTimeoutError` (the limit
 * then is the visibility timeout).
 */
export async function runWithinLimit(
  work: () => unknown,
  id: string,
  controller: AbortController,
  ms: number,
  handlerTimeoutSet: boolean,
): Promise<void> {
  if (ms <= 0) {
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(controller.signal.reason);
      controller.signal.addEventListener('abort', onAbort, { once: true });
      Promise.resolve()
        .then(work)
        .then(
          () => resolve(),
          (error: unknown) => reject(error),
        )
        .finally(() => controller.signal.removeEventListener('abort', onAbort));
    });
    return;
  }
  await withTimeout(
    work,
    ms,
    () => {
      const error = handlerTimeoutSet ? new HandlerTimeoutError(id, ms) : new VisibilityTimeoutError(id, ms);
      controller.abort(error);
      throw error;
    },
    { signal: controller.signal },
  );
}

class VisibilityTimeoutError extends Error {
  constructor(id: string, ms: number) {
    super(
      `Handler for message '${id}' did not finish within the visibility timeout (${ms} ms; set handlerTimeout to allow longer)`,
    );
    this.name = 'VisibilityTimeoutError';
  }
}

class HandlerTimeoutError extends Error {
  constructor(id: string, ms: number) {
    super(`Handler for message '${id}' did not finish within handlerTimeout (${ms} ms)`);
    this.name = 'HandlerTimeoutError';
  }
}

/** The handler's signal reason when the node shut down before it finished. */
export class InboxShutdownError extends Error {
  constructor(graceMs: number) {
    super(`The inbox is shutting down and the handler did not finish within shutdownGrace (${graceMs} ms)`);
    this.name = 'InboxShutdownError';
  }
}

/** Message and stack, whole: ERROR is the seed's unbounded text column. */
export function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const head = `${error.name}: ${error.message}`;
  return error.stack ? (error.stack.startsWith(head) ? error.stack : `${head}\n${error.stack}`) : head;
}
