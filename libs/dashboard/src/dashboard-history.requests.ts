import { BadRequestException } from '@nestjs/common';
import { inboxParam } from './dashboard-inbox.requests';
import { InvalidDashboardActionError } from './errors';

/** `?id=&inbox=` of `api/inbox/history`. */
export function historyQuery(query: Record<string, unknown>): { id: string; inbox?: string } {
  const { id } = query;
  if (typeof id !== 'string' || id === '' || id.length > 64) {
    const expected = 'must be a message id (1 to 64 characters)';
    throw new BadRequestException(new InvalidDashboardActionError('id', id, expected).message);
  }
  return { id, inbox: inboxParam(query.inbox) };
}
