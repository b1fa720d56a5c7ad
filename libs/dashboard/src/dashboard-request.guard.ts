import {
  CanActivate,
  ExecutionContext,
  ForbiddenException,
  Inject,
  Injectable,
  UnsupportedMediaTypeException,
} from '@nestjs/common';
import { isObservable, lastValueFrom } from 'rxjs';
import {
  DASHBOARD_ACTION_GUARD,
  DASHBOARD_GUARD_READS,
  DASHBOARD_REQUEST_HEADER,
} from './dashboard.constants';

type HeaderBag = Record<string, string | string[] | undefined>;

/** Express and Fastify both expose the raw request's lower-cased headers as `headers`. */
function headersOf(context: ExecutionContext): HeaderBag {
  return (context.switchToHttp().getRequest<{ headers?: HeaderBag }>().headers ?? {}) as HeaderBag;
}

/**
 * Stands before the user's guard on every state-changing request. A cross-site HTML form can
 * send only form-encoded, multipart or text/plain bodies and no custom header, and a cross-site
 * fetch that sets either needs a CORS preflight the dashboard never answers: requiring a JSON
 * body and the `X-Holdfast-Request` header means a browser only sends an action from the
 * dashboard's own origin, whatever cookie the application's guard relies on.
 */
@Injectable()
export class DashboardRequestGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const headers = headersOf(context);
    const type = String(headers['content-type'] ?? '')
      .split(';')[0]
      .trim()
      .toLowerCase();
    if (type !== 'application/json') {
      throw new UnsupportedMediaTypeException(
        `Holdfast dashboard actions take a JSON body (Content-Type: application/json), got ${type ? `'${type}'` : 'none'}`,
      );
    }
    if (headers[DASHBOARD_REQUEST_HEADER] === undefined) {
      throw new ForbiddenException(
        `Holdfast dashboard actions need the ${DASHBOARD_REQUEST_HEADER} header (the page sends it; a cross-site form cannot)`,
      );
    }
    return true;
  }
}

/**
 * Stands on the page and the state API when forRoot's `guardReads` is true: the user's guard
 * decides there too (the state lists message ids, types and errors). Without `guardReads` reads
 * are open, as before.
 */
@Injectable()
export class DashboardReadsGuard implements CanActivate {
  constructor(
    @Inject(DASHBOARD_ACTION_GUARD) private readonly guard: CanActivate | null,
    @Inject(DASHBOARD_GUARD_READS) private readonly guardReads: boolean,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (!this.guardReads || !this.guard) return true;
    const verdict = this.guard.canActivate(context);
    const allowed = isObservable(verdict) ? await lastValueFrom(verdict) : await verdict;
    if (!allowed) throw new ForbiddenException('The dashboard guard refused this request');
    return true;
  }
}
