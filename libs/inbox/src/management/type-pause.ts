import { InvalidManagementArgumentError } from '../errors';
import {
  MAX_PAUSE_ACTOR_LENGTH,
  MAX_PAUSE_REASON_LENGTH,
  MAX_PAUSE_TYPE_LENGTH,
} from '../store/inbox-pause.table';
import type { TypeFilter as MessageTypeFilter } from '../store/cor-message.management';
import { parseMessageTypeLabel } from './message-type-label';

/** A type paused across the cluster (see MessageManagement.pauseType). */
export interface PausedType {
  /** The type's label as paused: `shop:order` (any revision), `shop:order@2`, `order` (any namespace), `:order` (none). */
  type: string;
  /** Who paused it (the `actor` given, the CLI's user, the dashboard guard's user). */
  pausedBy: string;
  pausedAt: Date;
  reason?: string;
}

/** Who pauses or resumes a type, and why: for the pause row and the audit line. */
export interface TypePauseOptions {
  /** Why, shown beside the pause (at most 1,000 characters). */
  reason?: string;
  /** Who (at most 255 characters). Default: 'an unnamed caller'. */
  actor?: string;
}

export const UNNAMED_ACTOR = 'an unnamed caller';

/**
 * The label a pause is stored under, one spelling per selection: what parseMessageTypeLabel reads,
 * written back so that `:order` (no namespace) stays apart from `order` (any namespace).
 */
export function pauseKey(type: string | MessageTypeFilter): string {
  const filter = typeof type === 'string' ? parseMessageTypeLabel(type) : type;
  const { name, namespace, revision } = filter ?? {};
  const valid =
    typeof name === 'string' &&
    name !== '' &&
    (namespace === undefined || namespace === null || typeof namespace === 'string') &&
    (revision === undefined || revision === null || typeof revision === 'string');
  if (!valid || name.includes('@') || (typeof namespace === 'string' && namespace.includes(':'))) {
    throw new InvalidManagementArgumentError(
      'type',
      type,
      "must be a type label namespace:name[@revision] (e.g. 'shop:order') or { name, namespace?, revision? }",
    );
  }
  const ns = namespace === undefined ? '' : `${namespace ?? ''}:`;
  const rev = revision === undefined ? '' : `@${revision ?? ''}`;
  const key = `${ns}${name}${rev}`;
  if (key.length > MAX_PAUSE_TYPE_LENGTH)
    throw new InvalidManagementArgumentError(
      'type',
      type,
      `must be at most ${MAX_PAUSE_TYPE_LENGTH} characters`,
    );
  return key;
}

/** The actor and reason checked: strings within the columns' lengths. */
export function pauseDetails(options: TypePauseOptions): { actor: string; reason?: string } {
  const { actor = UNNAMED_ACTOR, reason } = options ?? {};
  if (typeof actor !== 'string' || actor === '' || actor.length > MAX_PAUSE_ACTOR_LENGTH)
    throw new InvalidManagementArgumentError(
      'actor',
      actor,
      `must be a string of 1 to ${MAX_PAUSE_ACTOR_LENGTH} characters`,
    );
  if (reason !== undefined && (typeof reason !== 'string' || reason.length > MAX_PAUSE_REASON_LENGTH))
    throw new InvalidManagementArgumentError(
      'reason',
      reason,
      `must be a string of at most ${MAX_PAUSE_REASON_LENGTH} characters`,
    );
  return { actor, ...(reason ? { reason } : {}) };
}
