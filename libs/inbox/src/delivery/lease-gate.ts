/**
 * The order between a node's heartbeats and its completion deletes. Both read the lease ends the
 * node wrote, and a heartbeat moves them: a delete that read an end a heartbeat then moved would
 * miss its row (delivered again after the lease). So a heartbeat runs alone, once the deletes in
 * flight are done, and deletes that come after it wait for it; deletes of different messages
 * (each flush takes its own ids) run side by side, so a database far away costs a round trip per
 * delete, not a round trip per delete one after the other.
 */
export class LeaseGate {
  /** Deletes in flight. */
  private sharing = 0;
  /** Called when the last delete in flight ends (a heartbeat waits for it). */
  private drained?: () => void;
  /** A heartbeat running, or waiting for the deletes in flight: what comes later waits for it. */
  private turn?: Promise<void>;

  /** A delete: runs beside other deletes, never beside a heartbeat. */
  async shared<T>(work: () => Promise<T>): Promise<T> {
    while (this.turn) await this.turn;
    this.sharing++;
    try {
      return await work();
    } finally {
      if (--this.sharing === 0) this.drained?.();
    }
  }

  /** A heartbeat: alone, after the deletes in flight. */
  async exclusive<T>(work: () => Promise<T>): Promise<T> {
    while (this.turn) await this.turn;
    let open!: () => void;
    this.turn = new Promise<void>((resolve) => (open = resolve));
    try {
      if (this.sharing > 0) await new Promise<void>((resolve) => (this.drained = resolve));
      this.drained = undefined;
      return await work();
    } finally {
      this.turn = undefined;
      open();
    }
  }

  /** Resolves once no heartbeat runs or waits (see ClaimLedger.flush). */
  async idle(): Promise<void> {
    while (this.turn) await this.turn;
  }
}
