import { HoldfastError } from '@holdfast/core/kit';

/**
 * A handler's fenced write was refused: the message it is handling is no longer held by this
 * delivery's claim (its lease ran out and another node claimed it, or it was delivered and
 * deleted, failed, released or changed by an admin since). Nothing of the write was committed.
 */
export class InboxDeliveryFencedError extends HoldfastError {
  constructor(
    readonly id: string,
    readonly token: number,
  ) {
    super(
      `Inbox message '${id}': the fenced write was refused, this delivery (claim token ${token}) no longer holds ` +
        `the message (its lease ran out and another node claimed it, or it was finished or changed since). ` +
        `Nothing of the write was committed.`,
      'HOLDFAST_INBOX_DELIVERY_FENCED',
    );
    this.name = 'InboxDeliveryFencedError';
  }
}

/** `claim.fenced(manager, …)` was given something that is not a TypeORM EntityManager or DataSource. */
export class InvalidFencedManagerError extends HoldfastError {
  constructor(readonly value: unknown) {
    super(
      `claim.fenced(manager, work): 'manager' must be a TypeORM EntityManager or DataSource on the inbox's database, ` +
        `got ${value === null ? 'null' : typeof value}.`,
      'HOLDFAST_INBOX_INVALID_FENCED_MANAGER',
    );
    this.name = 'InvalidFencedManagerError';
  }
}
