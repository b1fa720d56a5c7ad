import { DeadlineQueue } from '@holdfast/core/kit';
import { HandlerTimeoutError, NoDeliveryClaimError, VisibilityTimeoutError } from '../errors';
import type { InboxHandlerContext, RegisteredHandler } from '../explorer/inbox-handler.registry';
import { DeliveryClaim, type InboxDeliveryClaim, type MessageFence } from '../fencing/message-fence';

/**
 * A counting semaphore whose free slot is taken synchronously (async-mutex's `Semaphore` has no
 * synchronous acquire, and the delivery takes a slot per message). Waiters are served first come,
 * first served; a slot given back goes straight to the longest waiter.
 */
class Slots {
  /** Waiters from `head` on (a whole batch can wait at once: no `shift()` per slot given). */
  private waiting: (() => void)[] = [];
  private head = 0;

  constructor(private free: number) {}

  /** Takes a slot now if one is free. */
  tryTake(): boolean {
    if (this.free === 0) return false;
    this.free--;
    return true;
  }

  /** Resolves once a slot is this caller's. */
  take(): Promise<void> {
    if (this.tryTake()) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  give(): void {
    if (this.head === this.waiting.length) {
      this.free++;
      return;
    }
    const next = this.waiting[this.head++];
    if (this.head === this.waiting.length) {
      this.waiting = [];
      this.head = 0;
    }
    next();
  }
}

/**
 * Handler concurrency: one limit for the node, and one per handler that declares its own
 * (`@InboxHandler({ concurrency })`).
 */
export class HandlerSlots {
  private readonly node: Slots;
  private readonly perHandler = new Map<RegisteredHandler, Slots>();

  constructor(concurrency: number) {
    this.node = new Slots(concurrency);
  }

  /**
   * Takes a slot of the handler (its own limit first), then one of the node: at once when both
   * are free (true), else undefined and `acquire` waits. The delivery gives the handler's slot
   * back when the call ends (`releaseHandler`) and the node's when its message is deleted
   * (`releaseNode`), so that the messages in a node's hands (running, or delivered and not yet
   * deleted: what a crash delivers again) never outnumber its concurrency.
   */
  tryAcquire(handler: RegisteredHandler): boolean {
    const own = this.own(handler);
    if (own && !own.tryTake()) return false;
    if (this.node.tryTake()) return true;
    own?.give();
    return false;
  }

  /** Waits for a slot of the handler, then one of the node. */
  acquire(handler: RegisteredHandler): Promise<void> {
    const own = this.own(handler);
    return own ? own.take().then(() => this.node.take()) : this.node.take();
  }

  releaseHandler(handler: RegisteredHandler): void {
    this.perHandler.get(handler)?.give();
  }

  releaseNode(): void {
    this.node.give();
  }

  private own(handler: RegisteredHandler): Slots | undefined {
    if (handler.concurrency === undefined) return undefined;
    let own = this.perHandler.get(handler);
    if (!own) this.perHandler.set(handler, (own = new Slots(handler.concurrency)));
    return own;
  }
}

/**
 * One handler call for one message: the handler's context, whose `signal` is created only when
 * the handler reads it (most never do), and the way the delivery gives the call up: a time limit
 * (the delivery's DeadlineQueue, one timer for all calls), a lost claim, a shutdown.
 */
export class HandlerRun {
  /** What the handler gets (see HandlerContext). */
  readonly context: InboxHandlerContext;
  private controller?: AbortController;
  private abortedWith?: { reason: unknown };
  /** Rejects the call's wait when it is given up. */
  private giveUp?: (reason: unknown) => void;

  private _claim?: DeliveryClaim;

  /**
   * `token`: the lease end the claim wrote (the claim's fencing token); `fence`: how a fenced
   * write checks the claim (none: outside a delivery, as in tests of the run alone).
   */
  constructor(
    readonly id: string,
    private readonly token = NaN,
    private readonly fence?: MessageFence,
  ) {
    // Made here, after the parameters are stored (a field initializer may run before them).
    this.context = new HandlerContext(this);
  }

  /** This delivery's claim, made when the handler first reads it. */
  get claim(): InboxDeliveryClaim {
    return (this._claim ??= new DeliveryClaim(this.id, this.token, this.fence ?? NO_FENCE));
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortedWith) this.controller.abort(this.abortedWith.reason);
    }
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.abortedWith !== undefined;
  }

  /** Why the call was given up (undefined while it was not). */
  get reason(): unknown {
    return this.abortedWith?.reason;
  }

  /** Gives the call up with `reason`: its signal aborts and its wait rejects (first reason wins). */
  abort(reason: unknown): void {
    if (this.abortedWith) return;
    this.abortedWith = { reason };
    this.controller?.abort(reason);
    this.giveUp?.(reason);
  }

  /**
   * Calls `work` now and waits for it within `deadlines` (none: no limit), or until the call is
   * given up (`abort`): then it rejects with the reason and `work` goes on unobserved. A
   * synchronous handler's result is taken as it is, without a promise (undefined is returned).
   */
  execute(work: () => unknown, deadlines: DeadlineQueue<HandlerRun> | undefined): Promise<void> | undefined {
    if (this.abortedWith) return Promise.reject(this.abortedWith.reason);
    const deadline = deadlines?.add(this);
    let result: unknown;
    try {
      result = work();
    } catch (error) {
      if (deadline) deadlines!.remove(deadline);
      return Promise.reject(error);
    }
    if (!isThenable(result)) {
      if (deadline) deadlines!.remove(deadline);
      return undefined;
    }
    return new Promise<void>((resolve, reject) => {
      const settle = () => {
        if (deadline) deadlines!.remove(deadline);
        this.giveUp = undefined;
      };
      this.giveUp = (reason) => {
        settle();
        reject(reason);
      };
      if (this.abortedWith) this.giveUp(this.abortedWith.reason); // given up while it started
      result.then(
        () => {
          settle();
          resolve();
        },
        (error: unknown) => {
          settle();
          reject(error);
        },
      );
    });
  }
}

/**
 * A handler's context: `signal` is an own enumerable getter, so that `{ ...context }` and
 * `const { signal } = context` both work, and the AbortController is made only when it is read.
 * One getter serves every context (an object literal with its own getter, made per message, cost
 * ten times as much: 0.8 µs against 0.1 µs a message on Node 20).
 */
class HandlerContext implements InboxHandlerContext {
  declare readonly signal: AbortSignal;
  declare readonly claim: InboxDeliveryClaim;
  readonly #run: HandlerRun;

  constructor(run: HandlerRun) {
    this.#run = run;
    Object.defineProperty(this, 'signal', SIGNAL);
    // A plain own property (a second getter doubled the context's cost); the claim is small.
    (this as { claim: InboxDeliveryClaim }).claim = run.claim;
  }

  static signalOf(context: HandlerContext): AbortSignal {
    return context.#run.signal;
  }
}

const SIGNAL: PropertyDescriptor = {
  get(this: HandlerContext) {
    return HandlerContext.signalOf(this);
  },
  enumerable: true,
};

/** A run made outside a delivery holds no claim: every fenced write is refused. */
const NO_FENCE: MessageFence = {
  statements: () => {
    throw new NoDeliveryClaimError();
  },
  leaseEndsOf: () => [],
};

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  );
}

/**
 * The time limit of handler calls (`ms`; none when 0): a call that takes longer counts as a failed
 * attempt (with backoff, then parking), so a stuck message cannot hold the loop; its signal aborts
 * with the timeout error: `HandlerTimeoutError` when `handlerTimeout` was set, else
 * `VisibilityTimeoutError` (the limit then is the visibility timeout).
 */
export function handlerDeadlines(
  ms: number,
  handlerTimeoutSet: boolean,
): DeadlineQueue<HandlerRun> | undefined {
  if (!(ms > 0)) return undefined;
  return new DeadlineQueue<HandlerRun>(ms, (run) =>
    run.abort(
      handlerTimeoutSet ? new HandlerTimeoutError(run.id, ms) : new VisibilityTimeoutError(run.id, ms),
    ),
  );
}

/** Message and stack, whole: ERROR is the seed's unbounded text column. */
export function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const head = `${error.name}: ${error.message}`;
  return error.stack ? (error.stack.startsWith(head) ? error.stack : `${head}\n${error.stack}`) : head;
}
