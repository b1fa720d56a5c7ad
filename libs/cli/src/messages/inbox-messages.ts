import { validateTablePrefix, type SqlClient } from '@holdfast/core/kit';
import {
  InboxTable,
  inboxTable,
  MESSAGE_STATUSES,
  messageTypeLabel,
  type InboxRow,
  type MessageStatus,
  type MessageTypeFilter,
} from '@holdfast/inbox';
import { withDatabase } from '../database';
import { CliUsageError, InboxTableMissingError, UnknownMessageTypeError } from '../errors';

/** What `holdfast messages <action>` does to each selected message. */
export const MESSAGE_ACTIONS = ['retry', 'pause', 'resume', 'delete'] as const;
export type MessageAction = (typeof MESSAGE_ACTIONS)[number];

/**
 * The statuses `--type` selects by default: the messages each action is for (retry and delete:
 * parked; resume: paused; pause: those still to be delivered).
 */
const DEFAULT_STATUSES: Record<MessageAction, readonly MessageStatus[]> = {
  retry: ['parked'],
  delete: ['parked'],
  resume: ['paused'],
  pause: ['due', 'retrying'],
};

/**
 * A `--type`: the filter its label reads as (parseMessageTypeLabel), and the label as given, for
 * messages.
 */
export interface TypeSelection {
  filter: MessageTypeFilter;
  label: string;
}

/**
 * Which messages: ids, or every message of a type (in the given statuses, else the action's), or
 * with `allMatching` every message the filter matches (a type or any, a status or the action's).
 */
export interface MessageSelection {
  ids?: readonly string[];
  type?: TypeSelection;
  /** Every message of the filter, of any type unless `type` names one (`--all-matching`). */
  allMatching?: boolean;
  /** Checked: one of the inbox's statuses. */
  status?: string;
}

export interface MessagesOptions {
  url: string | undefined;
  prefix?: string;
  /** The inbox's maxRetries: statuses, and how far `retry` lowers an exhausted RETRIES. */
  maxRetries: number;
}

/** One selected message, as it was, and what happened to it. */
export interface MessageOutcome {
  id: string;
  type: string | null;
  /** null: no such message. */
  status: MessageStatus | null;
  retries: number | null;
  /**
   * done: changed; would: --dry-run, it would be changed; unchanged: resume of a message that
   * is not paused; not found: no message with this id.
   */
  result: 'done' | 'would' | 'unchanged' | 'not found';
}

export interface MessagesReport {
  action: MessageAction | 'list';
  dryRun: boolean;
  maxRetries: number;
  messages: MessageOutcome[];
}

type Queries = InboxTable;

/** Rows read per page when a whole type is selected. */
const PAGE = 1000;

/** The most types an unknown-type error lists (the most numerous first). */
const TYPES_LISTED = 20;

function assertStatus(status: string | undefined): MessageStatus | undefined {
  if (status === undefined) return undefined;
  if (!MESSAGE_STATUSES.includes(status as MessageStatus)) {
    throw new CliUsageError(`--status must be one of ${MESSAGE_STATUSES.join(', ')}, got '${status}'`);
  }
  return status as MessageStatus;
}

/** The inbox's table under `prefix`, read and changed with the inbox's own statements (InboxTable). */
async function openInbox(sql: SqlClient, prefix: string, maxRetries: number): Promise<Queries> {
  const inbox = await InboxTable.open(sql, { tablePrefix: prefix, maxRetries });
  if (!inbox) throw new InboxTableMissingError(inboxTable({ tablePrefix: prefix }));
  return inbox;
}

/**
 * A type of which the inbox holds no message at all is a mistake (a typo, another spelling), not
 * an empty selection: UnknownMessageTypeError, naming the types it holds.
 */
async function assertTypeHeld(queries: Queries, type: TypeSelection | undefined, now: number): Promise<void> {
  if (!type || (await queries.countMatching(undefined, type.filter, now)) > 0) return;
  const held = (await queries.countByType())
    .map((t) => ({ type: messageTypeLabel(t), count: t.count }))
    .sort((a, b) => b.count - a.count || a.type.localeCompare(b.type));
  const listed = held.slice(0, TYPES_LISTED);
  if (held.length > listed.length) {
    listed.push({
      type: `${held.length - listed.length} more types`,
      count: held.slice(TYPES_LISTED).reduce((n, t) => n + t.count, 0),
    });
  }
  throw new UnknownMessageTypeError(type.label, listed);
}

/**
 * Every row of `type` in `statuses`, in delivery order: the database filters by status and type
 * (a namespace of '' selects the messages without one), PAGE rows per statement.
 */
async function rowsOfType(
  queries: Queries,
  statuses: readonly MessageStatus[],
  type: MessageTypeFilter | undefined,
  now: number,
): Promise<InboxRow[]> {
  const found: InboxRow[] = [];
  for (const status of statuses) {
    for (let offset = 0; ; offset += PAGE) {
      const page = await queries.list(status, PAGE, offset, now, type);
      found.push(...page);
      if (page.length < PAGE) break;
    }
  }
  return found.sort((a, b) => a.inserted - b.inserted || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** `holdfast messages list`: read-only; `offset` skips that many of the selected messages (paging). */
export async function listMessagesCommand(
  options: MessagesOptions & {
    status?: string;
    type?: TypeSelection;
    limit: number;
    offset?: number;
  },
): Promise<MessagesReport> {
  const prefix = options.prefix ?? '';
  validateTablePrefix(prefix);
  const status = assertStatus(options.status);
  return withDatabase(options.url, true, async (sql) => {
    const queries = await openInbox(sql, prefix, options.maxRetries);
    const now = await queries.now();
    await assertTypeHeld(queries, options.type, now);
    // One statement: the database pages the messages of the status and type.
    const rows =
      options.limit > 0
        ? await queries.list(status, options.limit, options.offset ?? 0, now, options.type?.filter)
        : [];
    return {
      action: 'list',
      dryRun: false,
      maxRetries: options.maxRetries,
      messages: rows.map((r) => ({
        id: r.id,
        type: messageTypeLabel(r),
        status: queries.statusOf(r, now),
        retries: r.retries,
        result: 'unchanged',
      })),
    };
  });
}

/**
 * `holdfast messages <retry|pause|resume|delete>`: the management operations of the inbox
 * (MessageManagement's own statements) on the ids given, or on every message of a type in the
 * action's statuses. `dryRun`: reads only, and says what would change.
 */
export async function messagesCommand(
  action: MessageAction,
  selection: MessageSelection,
  options: MessagesOptions & { dryRun: boolean },
): Promise<MessagesReport> {
  const prefix = options.prefix ?? '';
  validateTablePrefix(prefix);
  const status = assertStatus(selection.status);
  const ids = selection.ids ?? [];
  if (ids.length && selection.type) throw new CliUsageError('give message ids or --type, not both');
  if (ids.length && selection.allMatching)
    throw new CliUsageError('give message ids or --all-matching, not both');
  if (!ids.length && !selection.type && !selection.allMatching)
    throw new CliUsageError(`messages ${action} needs message ids, --type or --all-matching`);
  if (ids.length && status) throw new CliUsageError('--status selects with --type or --all-matching only');
  return withDatabase(options.url, options.dryRun, async (sql) => {
    const queries = await openInbox(sql, prefix, options.maxRetries);
    const now = await queries.now();
    await assertTypeHeld(queries, selection.type, now);
    const targets: (InboxRow | string)[] = ids.length
      ? await Promise.all(ids.map(async (id) => (await queries.find(id)) ?? id))
      : await rowsOfType(queries, status ? [status] : DEFAULT_STATUSES[action], selection.type?.filter, now);
    const messages: MessageOutcome[] = [];
    for (const target of targets) {
      if (typeof target === 'string') {
        messages.push({ id: target, type: null, status: null, retries: null, result: 'not found' });
        continue;
      }
      const before = queries.statusOf(target, now);
      const outcome = {
        id: target.id,
        type: messageTypeLabel(target),
        status: before,
        retries: target.retries,
      };
      // Resume changes only a message with the pause marker (a parked one too: it stays parked).
      if (action === 'resume' && !queries.isPaused(target)) {
        messages.push({ ...outcome, result: 'unchanged' });
        continue;
      }
      if (options.dryRun) {
        messages.push({ ...outcome, result: 'would' });
        continue;
      }
      const changed = await apply(queries, action, target.id);
      messages.push({
        ...outcome,
        result: changed ? 'done' : action === 'resume' ? 'unchanged' : 'not found',
      });
    }
    return { action, dryRun: options.dryRun, maxRetries: options.maxRetries, messages };
  });
}

async function apply(queries: Queries, action: MessageAction, id: string): Promise<boolean> {
  switch (action) {
    case 'retry':
      return queries.retryNow(id);
    case 'pause':
      return queries.pause(id);
    case 'resume':
      return queries.resume(id);
    case 'delete':
      return queries.delete(id);
  }
}
