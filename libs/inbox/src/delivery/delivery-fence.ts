import { Injectable } from '@nestjs/common';
import { MessageFenceStatements, type MessageFence } from '../fencing/message-fence';
import { InboxConnection } from '../store/inbox-connection';
import { ClaimLedger } from './claim-ledger';

/** What a handler's fenced write checks its claim with: the ledger's lease ends, and the statements (made at first use). */
@Injectable()
export class DeliveryFence implements MessageFence {
  private made?: MessageFenceStatements;

  constructor(
    private readonly connection: InboxConnection,
    private readonly ledger: ClaimLedger,
  ) {}

  statements(): MessageFenceStatements {
    return (this.made ??= new MessageFenceStatements(this.connection.store.on));
  }

  leaseEndsOf(id: string): number[] {
    return this.ledger.leaseEndsOf(id);
  }
}
