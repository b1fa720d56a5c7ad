import { Inject, Injectable } from '@nestjs/common';
import { INBOX_OPTIONS } from '../inbox.tokens';
import type { ResolvedInboxOptions } from '../options/resolved-inbox-options';
import { ClaimLedger } from './claim-ledger';
import { DatabaseOutage } from './database-outage';
import { DeliveryRun, type Claim, type DeliveryReport, type DeliveryRunContext } from './delivery-run';
import { DeliveryState } from './delivery-state';
import { HandlerCalls } from './handler-calls';
import { OutcomeRecorder } from './outcome-recorder';

/** Delivers claimed batches, each as one DeliveryRun, with what every run of this inbox uses. */
@Injectable()
export class DeliveryRuns implements DeliveryRunContext {
  constructor(
    @Inject(INBOX_OPTIONS) readonly options: ResolvedInboxOptions,
    readonly calls: HandlerCalls,
    readonly ledger: ClaimLedger,
    readonly recorder: OutcomeRecorder,
    readonly outage: DatabaseOutage,
    readonly state: DeliveryState,
  ) {}

  /** Delivers `claim` (see DeliveryRun). */
  deliver(claim: Claim): Promise<DeliveryReport> {
    return new DeliveryRun(this, claim).deliver();
  }
}
