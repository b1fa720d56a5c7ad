import { Injectable, Logger } from '@nestjs/common';

/** The most ids one audit line names (the counts are always whole). */
const IDS_NAMED = 20;

/** What Express and Fastify both give a request: the guard's user (Passport's convention) and the client address. */
interface AuditedRequest {
  user?: unknown;
  ip?: string;
}

/**
 * Who did it, for an audit line: the user the application's guard put on the request
 * (`request.user`, Passport's convention: a string, or its username, name, email, id or sub).
 */
export function actorOf(request: AuditedRequest): string {
  const user = request.user;
  if (typeof user === 'string' && user) return user;
  if (user && typeof user === 'object') {
    for (const key of ['username', 'name', 'email', 'id', 'sub']) {
      const value = (user as Record<string, unknown>)[key];
      if ((typeof value === 'string' && value) || typeof value === 'number') return String(value);
    }
  }
  return 'an unnamed user (the guard set no request.user)';
}

/**
 * The audit trail of the dashboard's admin actions: one `log`-level line per request (one
 * message or a bulk action) through the application's logger, context `HoldfastDashboardAudit`:
 * who (the guard's user) and from where, the action, how many it changed of how many asked, the
 * inbox, and the ids changed. An action that fails midway says so, with what it had done.
 */
@Injectable()
export class DashboardAudit {
  private readonly logger = new Logger('HoldfastDashboardAudit');

  /** A message type paused or resumed (`done` false: a resume of a type that was not paused). */
  typeActed(
    request: AuditedRequest,
    change: { action: string; type: string; reason?: string; inbox?: string; done: boolean },
  ): void {
    const why = change.reason ? ` (${change.reason})` : '';
    this.logger.log(
      `${actorOf(request)}${request.ip ? ` (${request.ip})` : ''} ${change.action} '${change.type}'${why} ` +
        `in inbox '${change.inbox ?? 'default'}'${change.done ? '' : ': it was not paused, nothing changed'}`,
    );
  }

  acted(
    request: AuditedRequest,
    action: string,
    inbox: string | undefined,
    asked: number,
    done: readonly string[],
    failure?: unknown,
  ): void {
    const named = done.slice(0, IDS_NAMED).join(', ');
    const ids = done.length > IDS_NAMED ? `${named} and ${done.length - IDS_NAMED} more` : named;
    const line =
      `${actorOf(request)}${request.ip ? ` (${request.ip})` : ''} ${action} ${done.length} of ${asked} ` +
      `message(s) in inbox '${inbox ?? 'default'}'${ids ? `: ${ids}` : ''}`;
    if (failure === undefined) this.logger.log(line);
    else
      this.logger.warn(
        `${line}; then failed: ${failure instanceof Error ? failure.message : String(failure)}`,
      );
  }
}
