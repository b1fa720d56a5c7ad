import type { ClusterMode } from '../inbox.options';

/**
 * Who may deliver on this node. 'competing': every node, each claiming its own rows.
 * 'leader': only the current owner of a Simba mutex.
 */
export interface InboxLeadership {
  readonly mode: ClusterMode;
  isLeader(): boolean;
  start(): void | Promise<void>;
  stop(): void | Promise<void>;
}

/** Competing consumers: claiming with SKIP LOCKED and a lease keeps nodes apart. */
export class CompetingLeadership implements InboxLeadership {
  readonly mode = 'competing' as const;
  isLeader(): boolean {
    return true;
  }
  start(): void {}
  stop(): void {}
}
