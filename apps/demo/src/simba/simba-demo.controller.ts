import { BadRequestException, Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { InvalidFencingTokenError, MutexContendRegistry } from '@holdfast/simba';
import { DEMO_LEADER_MUTEX, LeaderTicker } from './leader-ticker.service';

@Controller('simba')
export class SimbaDemoController {
  constructor(
    private readonly registry: MutexContendRegistry,
    private readonly ticker: LeaderTicker,
  ) {}

  /** Who leads `demo-leader` (as last read from simba_mutex), what this instance did, the ledger row. */
  @Get()
  async status() {
    const service = this.registry.get(DEMO_LEADER_MUTEX);
    const owner = service?.afterOwner;
    const ledger = await this.ticker.readLedger();
    return {
      mutex: DEMO_LEADER_MUTEX,
      owner: owner?.hasOwner() ? owner.ownerId : null,
      isOwner: service?.isOwner ?? false,
      fencingToken: owner?.hasOwner() ? owner.fencingToken : null,
      instanceId: service?.contenderId ?? null,
      ticks: this.ticker.ticks,
      lastTickAt: this.ticker.lastTickAt ?? null,
      ledger: ledger && { writer: ledger.writer, ticks: ledger.ticks, fence: ledger.fence ?? null },
      ledgerWrites: this.ticker.ledgerWrites,
    };
  }

  /**
   * A write to the ledger under the given fencing token, as a leader paused past its lease would
   * send it: `{"token": <an old leader's token>}` is refused once a newer leader has written.
   */
  @Post('ledger')
  @HttpCode(200)
  async writeLedger(@Body() body: { token?: unknown }) {
    try {
      return await this.ticker.writeLedger(body?.token as number);
    } catch (error) {
      if (error instanceof InvalidFencingTokenError) throw new BadRequestException(error.message);
      throw error;
    }
  }
}
