import type { MessageType } from '../inbox-message';

/** What became of one attempt (or of the message, for 'expired'). */
export type HistoryOutcome = 'delivered' | 'failed' | 'parked' | 'expired';

/** One row of a message's history (`MessageManagement.history`). */
export interface HistoryEntry {
  messageId: string;
  /** Unknown (undefined) for 'expired': the cleanup deletes by id. */
  type?: MessageType;
  outcome: HistoryOutcome;
  /** 1 for the first delivery; for 'expired', the attempts made before. */
  attempt: number;
  /** The handler's error for 'failed' and 'parked' (at most 8,000 characters). */
  error?: string;
  /** The instance id of the node that recorded it. */
  node: string;
  /** Database time of the outcome. */
  at: Date;
}

/** One minute of an inbox's statistics, summed over its nodes (`MessageManagement.stats`). */
export interface InboxStatsMinute {
  /** Start of the minute (database clock). */
  minute: Date;
  delivered: number;
  failed: number;
  parked: number;
  /** Messages in the table at the minute's sample (null: no sample in that minute). */
  depth: number | null;
  /** Parked messages at the minute's sample. */
  parkedNow: number | null;
  /** The node that sampled: the leader in leader mode. */
  leader: string | null;
}

/** A type to read the history of (the shape of MessageManagement's MessageTypeFilter). */
export interface HistoryTypeFilter {
  name: string;
  namespace?: string | null;
  revision?: string | null;
}
