import { Injectable, Logger } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import {
  fenced,
  LeaderOnly,
  MutexContendRegistry,
  OnMutexAcquired,
  OnMutexReleased,
  type FencedUpdateResult,
  type MutexState,
} from '@holdfast/simba';
import { LEDGER_ROW, LeaderLedger } from './leader-ledger.entity';

export const DEMO_LEADER_MUTEX = 'demo-leader';

/**
 * A job that should run on one instance only: it ticks every 2 s on the current leader and
 * records the tick in the demo's own `demo_leader_ledger` table through `fenced()`.
 */
@Injectable()
export class LeaderTicker {
  private readonly logger = new Logger(LeaderTicker.name);
  ticks = 0;
  lastTickAt?: string;
  /** Fenced writes of this instance: accepted, and refused because a newer owner had written. */
  readonly ledgerWrites = { accepted: 0, refused: 0 };

  constructor(
    private readonly registry: MutexContendRegistry,
    @InjectRepository(LeaderLedger) private readonly ledger: Repository<LeaderLedger>,
  ) {}

  @Interval(2_000)
  @LeaderOnly(DEMO_LEADER_MUTEX)
  async tick(): Promise<void> {
    const token = this.registry.get(DEMO_LEADER_MUTEX)?.fencingToken;
    if (token === undefined) return;
    this.ticks++;
    this.lastTickAt = new Date().toISOString();
    await this.writeLedger(token).catch((error: Error) =>
      this.logger.warn(`The ledger write failed: ${error.message}`),
    );
  }

  /**
   * Writes the ledger under `token`: the row accepts it only while its stored fence is not above
   * the token. `POST /simba/ledger` calls this with any token, to show a stale one refused.
   */
  async writeLedger(token: number): Promise<FencedUpdateResult> {
    const writer = this.registry.get(DEMO_LEADER_MUTEX)?.contenderId ?? 'unknown';
    const result = await fenced(this.ledger).update(
      { id: LEDGER_ROW },
      { writer, ticks: () => 'ticks + 1' },
      token,
    );
    if (result.accepted) this.ledgerWrites.accepted++;
    else this.ledgerWrites.refused++;
    return result;
  }

  /** The ledger row as stored: who wrote last, under which fence, how many ticks in all. */
  async readLedger(): Promise<LeaderLedger | null> {
    return this.ledger.findOneBy({ id: LEDGER_ROW });
  }

  @OnMutexAcquired(DEMO_LEADER_MUTEX)
  elected(state: MutexState): void {
    this.logger.log(
      `This instance is now the leader of '${DEMO_LEADER_MUTEX}' (fencing token ${state.fencingToken})`,
    );
  }

  @OnMutexReleased(DEMO_LEADER_MUTEX)
  demoted(): void {
    this.logger.log(`This instance is no longer the leader of '${DEMO_LEADER_MUTEX}'`);
  }
}
