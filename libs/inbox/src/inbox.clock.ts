import { Inject, Injectable } from '@nestjs/common';
import { INBOX_OPTIONS } from './inbox.tokens';
import { InboxConnection } from './store/inbox-connection';
import type { ResolvedInboxOptions } from './options/resolved-inbox-options';
import type { Now } from './store/cor-message.rows';

/**
 * The inbox's notion of now, in epoch ms: the database clock (what every node compares against),
 * or the `clock` option when a test wants to move time itself.
 */
@Injectable()
export class InboxClock {
  constructor(
    private readonly connection: InboxConnection,
    @Inject(INBOX_OPTIONS) private readonly options: ResolvedInboxOptions,
  ) {}

  async now(): Promise<number> {
    return this.options.clock ? Number(await this.options.clock()) : this.connection.sql.nowMillis();
  }

  /** The injected clock's value to bind, or undefined: use the database clock inline in SQL. */
  async bindable(): Promise<Now> {
    return this.options.clock ? Number(await this.options.clock()) : undefined;
  }
}
