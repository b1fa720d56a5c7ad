import type { Provider } from '@nestjs/common';
import { InboxConnection } from '../store/inbox-connection';
import { DeliveryTracing } from '../tracing/delivery-tracing';
import { BatchClaimer } from './batch-claimer';
import { BatchDelivery } from './batch-delivery';
import { ClaimLedger } from './claim-ledger';
import { CleanupTicks } from './cleanup-ticks';
import { DatabaseOutage } from './database-outage';
import { CompletionLanes } from './completion-lanes';
import { DeliveryDrain } from './delivery-drain';
import { DeliveryFence } from './delivery-fence';
import { DeliveryRuns } from './delivery-runs';
import { DELIVERY_SETTINGS, deliverySettingsProvider, type DeliverySettings } from './delivery-settings';
import { DeliveryState } from './delivery-state';
import { ExpiredDeletes } from './expired-deletes';
import { ExpiryCleanup } from './expiry-cleanup';
import { HandlerCalls } from './handler-calls';
import { HandlerSlots } from './handler-run';
import { LeasedClaim } from './leased-claim';
import { OutcomeRecorder } from './outcome-recorder';
import { PollSchedule } from './poll-schedule';
import { RateLimiter } from './rate-limiter';

/**
 * The parts of an inbox's delivery, one set per InboxModule (a named inbox has its own), which
 * InboxDelivery starts and drains. Tests can replace any of them (`overrideProvider`).
 */
export const DELIVERY_PROVIDERS: Provider[] = [
  deliverySettingsProvider,
  DeliveryState,
  DatabaseOutage,
  CompletionLanes,
  ClaimLedger,
  RateLimiter,
  LeasedClaim,
  BatchClaimer,
  OutcomeRecorder,
  {
    provide: HandlerSlots,
    useFactory: (settings: DeliverySettings) => new HandlerSlots(settings.concurrency),
    inject: [DELIVERY_SETTINGS],
  },
  {
    // The table is read when the first span is made (it is known once the module has started).
    provide: DeliveryTracing,
    useFactory: (connection: InboxConnection) => new DeliveryTracing(() => connection.store.table),
    inject: [InboxConnection],
  },
  DeliveryFence,
  HandlerCalls,
  DeliveryRuns,
  BatchDelivery,
  PollSchedule,
  CleanupTicks,
  ExpiredDeletes,
  ExpiryCleanup,
  DeliveryDrain,
];
