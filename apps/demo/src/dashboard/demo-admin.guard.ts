import { Injectable, type CanActivate } from '@nestjs/common';

/**
 * DEMO ONLY: lets every request use the dashboard's inbox actions (retry, pause, resume, delete),
 * so anyone who reaches the port can act on messages. A real service passes its own guard (a
 * session, a role, an API key) to HoldfastDashboardModule.forRoot({ guard }).
 */
@Injectable()
export class DemoAdminGuard implements CanActivate {
  canActivate(): boolean {
    return true;
  }
}
