import type { DashboardMatching } from './dashboard-matching';
import { BadRequestException } from '@nestjs/common';
import { InvalidDashboardActionError } from './errors';

/** What the dashboard's routes read from a request, checked: a 400 naming what was wrong otherwise. */

export const DASHBOARD_ACTIONS = ['retry', 'pause', 'resume', 'delete'] as const;
export type DashboardAction = (typeof DASHBOARD_ACTIONS)[number];
const LISTED_STATUSES = ['parked', 'paused', 'due', 'retrying'] as const;
/** The most ids one bulk action takes (each is its own statement). */
const BULK_LIMIT = 1000;

export function noInbox(inbox: unknown): string {
  return inbox === undefined
    ? 'This application has no InboxModule'
    : `This application has no inbox named '${String(inbox)}'`;
}

function badRequest(what: string, value: unknown, expected: string): BadRequestException {
  return new BadRequestException(new InvalidDashboardActionError(what, value, expected).message);
}

/** A non-negative integer query parameter, or `fallback` when absent. */
function intParam(name: string, raw: unknown, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw badRequest(name, raw, `must be an integer from ${min} to ${max}`);
  }
  return value;
}

/** An inbox's name when given (the default inbox without one). */
export function inboxParam(inbox: unknown): string | undefined {
  if (inbox !== undefined && (typeof inbox !== 'string' || inbox === '')) {
    throw badRequest('inbox', inbox, 'must be the name of an inbox when given');
  }
  return inbox;
}

/** `api/inbox/messages`' query: status, inbox, id or type, offset and limit (default `limit`). */
export function messagesQuery(query: Record<string, unknown>, limit: number) {
  const status = query.status ?? 'parked';
  if (!LISTED_STATUSES.includes(status as (typeof LISTED_STATUSES)[number])) {
    throw badRequest('status', status, `is not one of ${LISTED_STATUSES.join(', ')}`);
  }
  const inbox = inboxParam(query.inbox);
  const id = query.id;
  if (id !== undefined && (typeof id !== 'string' || id === '')) {
    throw badRequest('id', id, 'must be a non-empty message id when given');
  }
  const type = query.type;
  if (type !== undefined && (typeof type !== 'string' || type === '')) {
    throw badRequest('type', type, 'must be a message type (namespace/name or name) when given');
  }
  if (type !== undefined && id !== undefined) throw badRequest('type', type, 'goes without id');
  return {
    inbox,
    status: status as string,
    id,
    type,
    offset: intParam('offset', query.offset, 0, 0, Number.MAX_SAFE_INTEGER),
    limit: intParam('limit', query.limit, limit, 1, 1000),
  };
}

/** `api/inbox/bulk`'s body: `{ action, ids, inbox? }`. */
/** A bulk action's request: the ids to act on, or the filter whose matches it acts on. */
export type BulkRequest = { action: DashboardAction; inbox: unknown } & (
  { ids: string[]; matching?: undefined } | { ids?: undefined; matching: DashboardMatching }
);

/** `api/inbox/bulk`'s body: `{ action, ids, inbox? }` or `{ action, matching: { status, type? }, inbox? }`. */
export function bulkBody(body: unknown): BulkRequest {
  const { action, ids, inbox, matching } = (body ?? {}) as {
    action?: unknown;
    ids?: unknown;
    inbox?: unknown;
    matching?: unknown;
  };
  if (!DASHBOARD_ACTIONS.includes(action as DashboardAction)) {
    throw badRequest('action', action ?? null, `is not one of ${DASHBOARD_ACTIONS.join(', ')}`);
  }
  if (matching !== undefined) {
    if (ids !== undefined) throw badRequest('ids', '(given)', 'go without matching');
    return { action: action as DashboardAction, matching: matchingFilter(matching), inbox };
  }
  if (
    !Array.isArray(ids) ||
    ids.length === 0 ||
    ids.length > BULK_LIMIT ||
    !ids.every((id) => typeof id === 'string' && id !== '')
  ) {
    throw badRequest('ids', ids ?? null, `must be a list of 1 to ${BULK_LIMIT} message ids`);
  }
  return { action: action as DashboardAction, ids: ids as string[], inbox };
}

/** A bulk body's `matching`: `{ status, type? }`, the status one the page lists. */
function matchingFilter(matching: unknown): DashboardMatching {
  if (typeof matching !== 'object' || matching === null || Array.isArray(matching)) {
    throw badRequest('matching', matching, 'must be { "status": ..., "type"?: ... }');
  }
  const { status, type } = matching as { status?: unknown; type?: unknown };
  if (!LISTED_STATUSES.includes(status as (typeof LISTED_STATUSES)[number])) {
    throw badRequest('matching.status', status ?? null, `is not one of ${LISTED_STATUSES.join(', ')}`);
  }
  if (type !== undefined && (typeof type !== 'string' || type === '')) {
    throw badRequest('matching.type', type, 'must be a message type (namespace:name or name) when given');
  }
  return { status: status as string, type: type as string | undefined };
}

/** `api/inbox/:action`'s action and body: `{ id, inbox? }`. */
export function actRequest(
  action: string,
  body: unknown,
): { action: DashboardAction; id: string; inbox: string | undefined } {
  if (!DASHBOARD_ACTIONS.includes(action as DashboardAction)) {
    throw badRequest('action', action, `is not one of ${DASHBOARD_ACTIONS.join(', ')}`);
  }
  const { id, inbox } = (body ?? {}) as { id?: unknown; inbox?: unknown };
  if (typeof id !== 'string' || id === '') {
    throw badRequest('id', id ?? null, 'must be a non-empty string in the JSON body');
  }
  return { action: action as DashboardAction, id, inbox: inboxParam(inbox) };
}

/** A type pause or resume: `api/inbox/types/:action`'s action and body `{ type, reason?, inbox? }`. */
export interface TypeActRequest {
  action: 'pause' | 'resume';
  type: string;
  reason?: string;
  inbox: string | undefined;
}

/** `api/inbox/types/:action`'s action (pause, resume) and body, checked. */
export function typeActRequest(action: string, body: unknown): TypeActRequest {
  if (action !== 'pause' && action !== 'resume')
    throw badRequest('action', action, 'is not one of pause, resume');
  const { type, reason, inbox } = (body ?? {}) as { type?: unknown; reason?: unknown; inbox?: unknown };
  if (typeof type !== 'string' || type.trim() === '') {
    throw badRequest(
      'type',
      type ?? null,
      'must be a message type in the JSON body (namespace:name, e.g. shop:order)',
    );
  }
  if (reason !== undefined && reason !== null && typeof reason !== 'string') {
    throw badRequest('reason', reason, 'must be a string when given');
  }
  if (action === 'resume' && reason) throw badRequest('reason', reason, 'goes with pause only');
  return {
    action,
    type: type.trim(),
    ...(reason ? { reason: reason as string } : {}),
    inbox: inboxParam(inbox),
  };
}
