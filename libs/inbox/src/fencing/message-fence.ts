import { SqlClient, sqliteGate, StatementBinder, type Statement } from '@holdfast/core/kit';
import { DataSource, EntityManager } from 'typeorm';
import type { CorMessageShared } from '../store/cor-message.shared';
import { InboxDeliveryFencedError, InvalidFencedManagerError } from '../errors';

/**
 * The statement that fences a handler's write: it finds the message's row only where NEXT_RETRY
 * still holds a lease end this node wrote for it (the seed has no owner column: a claim is
 * NEXT_RETRY = the end of its lease, and another node's claim writes its own, later, end), and
 * locks it until the handler's transaction ends, so no other node can claim it in between.
 * PostgreSQL and MariaDB: `SELECT … FOR UPDATE` (another node's claim skips a locked row).
 * SQLite: a no-op `UPDATE … RETURNING`, which takes the database's write lock for the rest of
 * the transaction (a read alone would not keep a writer out under WAL).
 */
export class MessageFenceStatements {
  constructor(private readonly on: CorMessageShared) {}

  held(id: string, leaseEnds: readonly number[]): Statement {
    const b = new StatementBinder(this.on.d);
    const idParam = b.bind(id);
    const ranges = leaseEnds
      .map(
        (until) => `(NEXT_RETRY >= ${this.on.t.at(b, until)} AND NEXT_RETRY < ${this.on.t.at(b, until + 1)})`,
      )
      .join(' OR ');
    const where = `ID = ${idParam} AND (${ranges})`;
    if (this.on.d.singleConnection) {
      return b.statement(`UPDATE ${this.on.table} SET RETRIES = RETRIES WHERE ${where} RETURNING ID`);
    }
    return b.statement(`SELECT ID FROM ${this.on.table} WHERE ${where}${this.on.d.forUpdate()}`);
  }

  /**
   * A client on the transaction `manager` is in (the user's): its statements run on that
   * transaction's connection, as the user's own do.
   */
  inTransactionOf(manager: EntityManager): SqlClient {
    if (!manager.queryRunner) throw new InvalidFencedManagerError(manager);
    return new SqlClient(manager.connection, this.on.d, manager.queryRunner, {}, true);
  }

  /** True on SQLite, where TypeORM has one connection per DataSource and transactions take turns. */
  get singleConnection(): boolean {
    return this.on.d.singleConnection;
  }
}

/** What a delivery's claim needs to fence a write: the statements, and the lease ends this node holds. */
export interface MessageFence {
  statements(): MessageFenceStatements;
  /** The lease ends the row of `id` may hold while this node still holds its claim (none: lost). */
  leaseEndsOf(id: string): number[];
}

/**
 * A handler's claim on the message it is handling (`context.claim`).
 *
 * `token` is the lease end (epoch ms) the claim wrote into NEXT_RETRY. A later claim of the same
 * message, by any node, is only possible once that lease (and every renewal of it) has ended,
 * and writes a later lease end: tokens of one message's deliveries grow, so `token` can also be
 * used as a fencing token with Simba's FencedRepository (a fence column on the application's
 * rows).
 */
export interface InboxDeliveryClaim {
  /** The id of the message this delivery is for. */
  readonly messageId: string;
  /** This delivery's fencing token (see above). */
  readonly token: number;
  /** Whether this node still believes it holds the claim (no database read). */
  readonly held: boolean;
  /**
   * Runs `work` in a transaction on `manager` (an EntityManager or a DataSource on the inbox's
   * database; the caller's transaction when the manager already has one), after checking, in that
   * transaction, that the message is still held by this delivery's claim and locking its row
   * until the transaction ends. Throws InboxDeliveryFencedError (`work` never runs) when the
   * message was claimed by another node since, or finished, released or changed: a frozen or
   * partitioned node that comes back after its lease ran out cannot write over the work of the
   * node that delivered the message again.
   */
  fenced<R>(manager: EntityManager | DataSource, work: (manager: EntityManager) => Promise<R>): Promise<R>;
}

export class DeliveryClaim implements InboxDeliveryClaim {
  constructor(
    readonly messageId: string,
    readonly token: number,
    private readonly fence: MessageFence,
  ) {}

  get held(): boolean {
    return this.fence.leaseEndsOf(this.messageId).length > 0;
  }

  async fenced<R>(
    target: EntityManager | DataSource,
    work: (manager: EntityManager) => Promise<R>,
  ): Promise<R> {
    const manager =
      target instanceof DataSource ? target.manager : target instanceof EntityManager ? target : undefined;
    if (!manager) throw new InvalidFencedManagerError(target);
    if (!this.held) throw new InboxDeliveryFencedError(this.messageId, this.token);
    const statements = this.fence.statements();
    const inTransaction = async (m: EntityManager) => {
      const ends = this.fence.leaseEndsOf(this.messageId);
      if (!ends.length) throw new InboxDeliveryFencedError(this.messageId, this.token);
      const rows = await statements.inTransactionOf(m).query(statements.held(this.messageId, ends));
      if (rows.length === 0) throw new InboxDeliveryFencedError(this.messageId, this.token);
      return work(m);
    };
    if (manager.queryRunner?.isTransactionActive) return inTransaction(manager);
    const run = () => manager.transaction(inTransaction);
    return statements.singleConnection ? sqliteGate(manager.connection).runExclusive(run) : run();
  }
}
