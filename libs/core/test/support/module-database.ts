import type { ModuleRef } from '@nestjs/core';
import {
  DatabaseResolver,
  HoldfastDatabase,
  type CoordinationLane,
  type HoldfastDatabaseOptions,
  type SqlClient,
} from '@holdfast/core/kit';

/**
 * A module's HoldfastDatabase as the connection specs need one: no Nest module around it (the
 * DataSource given in `options`), tables unprefixed, the schema checked; its coordination lane
 * `lane` when given (the lane a module of that kind would take otherwise).
 */
export class ModuleDatabase extends HoldfastDatabase {
  constructor(
    options: Partial<HoldfastDatabaseOptions>,
    private readonly lane?: CoordinationLane,
  ) {
    super({} as ModuleRef, new DatabaseResolver(), 'TestModule', {
      tablePrefix: '',
      schema: 'check',
      ...options,
    });
  }

  /** The application-pool client (for the inbox's accepts and the startup statements). */
  get application() {
    return this.applicationSql;
  }

  /** HoldfastDatabase.openLaneOnDemand, made public for the specs. */
  openOnDemand(lane: CoordinationLane) {
    return this.openLaneOnDemand(lane);
  }

  /** HoldfastDatabase.closeLaneOnDemand, made public for the specs. */
  closeOnDemand(sql: SqlClient) {
    return this.closeLaneOnDemand(sql);
  }

  protected override coordinationLane(): CoordinationLane {
    return this.lane ?? super.coordinationLane();
  }
}
