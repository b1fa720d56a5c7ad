import { Injectable } from '@nestjs/common';
import type { FailoverMetadata } from '../decorators/failover-options';

export interface DiscoveredFailover {
  metadata: FailoverMetadata;
  /** `Class.method` where it was declared. */
  declaredOn: string;
}

/** Every @Failover discovered at bootstrap, by name. */
@Injectable()
export class FailoverRegistry {
  private readonly byName = new Map<string, DiscoveredFailover>();

  add(failover: DiscoveredFailover): void {
    this.byName.set(failover.metadata.name, failover);
  }

  get(name: string): DiscoveredFailover | undefined {
    return this.byName.get(name);
  }

  list(): DiscoveredFailover[] {
    return [...this.byName.values()];
  }
}
