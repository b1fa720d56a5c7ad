import { Injectable } from '@nestjs/common';
import { FailoverBypass } from './failover-bypass';
import { FailoverFlights } from './failover-flights';
import { FailoverFreshness } from './failover-freshness';
import { FailoverKeeper } from './failover-keeper';
import { FailoverRecovery } from './failover-recovery';

/**
 * The ways the executor answers a call, one provider each (Nest builds them, tests may replace
 * them): the keeper stores a good value, the recovery answers a failure from the store, the
 * freshness serves the fresh window, the flights share one attempt per key, the bypass reports a
 * call left to the upstream alone.
 */
@Injectable()
export class FailoverAnswers {
  constructor(
    readonly keeper: FailoverKeeper,
    readonly recovery: FailoverRecovery,
    readonly freshness: FailoverFreshness,
    readonly flights: FailoverFlights,
    readonly bypass: FailoverBypass,
  ) {}
}
