import { CanActivate, ExecutionContext, ForbiddenException, Inject, Injectable } from '@nestjs/common';
import { isObservable, lastValueFrom } from 'rxjs';
import { DASHBOARD_ACTION_GUARD } from './dashboard.constants';

/**
 * Stands on every admin POST of the dashboard: with no guard given to forRoot the dashboard is
 * read-only and each POST answers 403; otherwise the user's guard decides, on the same context.
 */
@Injectable()
export class DashboardActionsGuard implements CanActivate {
  constructor(@Inject(DASHBOARD_ACTION_GUARD) private readonly guard: CanActivate | null) {}

  get enabled(): boolean {
    return this.guard !== null;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (!this.guard) {
      throw new ForbiddenException(
        'The Holdfast dashboard is read-only: give forRoot a guard to allow actions',
      );
    }
    const verdict = this.guard.canActivate(context);
    const allowed = isObservable(verdict) ? await lastValueFrom(verdict) : await verdict;
    if (!allowed) throw new ForbiddenException('The dashboard guard refused this action');
    return true;
  }
}
