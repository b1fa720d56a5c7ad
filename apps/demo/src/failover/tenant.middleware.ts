import { BadRequestException, Injectable, type NestMiddleware } from '@nestjs/common';
import { FailoverTenant } from '@holdfast/failover';

/** Routes each request's failover entries to its tenant's tables: header `X-Tenant: acme`. */
@Injectable()
export class TenantMiddleware implements NestMiddleware {
  use(
    req: { headers: Record<string, string | string[] | undefined> },
    _res: unknown,
    next: () => void,
  ): void {
    const header = req.headers['x-tenant'];
    const tenant = Array.isArray(header) ? header[0] : header;
    if (tenant === undefined || tenant === '') return next();
    if (!/^[a-z][a-z0-9_]{0,30}$/.test(tenant))
      throw new BadRequestException('X-Tenant must be a lower-case name like "acme"');
    FailoverTenant.run(tenant, next);
  }
}
