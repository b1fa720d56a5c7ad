import { StatementBinder, type SqlDialect, type Statement } from '@holdfast/core/kit';

/** One claim of a cleanup tick (see CleanupTicks). */
export interface TickClaim {
  leaseName: string;
  holder: string;
  intervalMs: number;
  /** The test clock (epoch ms), or undefined: the database clock inline. */
  now: number | undefined;
}

/**
 * The statements on `<prefix>HOLDFAST_INBOX_LEASE`: a node takes a cleanup tick by moving its
 * lease row's TICK forward (or by inserting the row, the first time).
 */
export class InboxLeaseStatements {
  constructor(
    private readonly dialect: SqlDialect,
    readonly table: string,
  ) {}

  /** Moves the row's TICK to the current tick, only if it is behind: one row changed = taken. */
  claimTick(claim: TickClaim): Statement {
    const b = new StatementBinder(this.dialect);
    const set = this.tick(b, claim);
    const holder = b.bind(claim.holder);
    const name = b.bind(claim.leaseName);
    return b.statement(
      `UPDATE ${this.table} SET TICK = ${set}, HOLDER = ${holder} WHERE LEASE_NAME = ${name} AND TICK < ${this.tick(b, claim)}`,
    );
  }

  /** The row of a lease taken for the first time (a duplicate key: another node was first). */
  insertTick(claim: TickClaim): Statement {
    const b = new StatementBinder(this.dialect);
    return b.statement(
      `INSERT INTO ${this.table} (LEASE_NAME, TICK, HOLDER) VALUES (${b.bind(claim.leaseName)}, ${this.tick(b, claim)}, ${b.bind(claim.holder)})`,
    );
  }

  /** The current tick: floor(now in ms / interval), by the database clock or the test clock. */
  private tick(b: StatementBinder, { now, intervalMs }: TickClaim): string {
    return now === undefined
      ? `FLOOR(${this.dialect.nowMillis} / ${b.bind(intervalMs)})`
      : b.bind(Math.floor(now / intervalMs));
  }
}
