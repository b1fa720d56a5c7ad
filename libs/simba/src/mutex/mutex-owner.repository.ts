import { Inject, Injectable } from '@nestjs/common';
import { toNumber, withTimeout, type Statement } from '@holdfast/core/kit';
import { MutexOwnerNotFoundError, MutexStatementTimeoutError, SimbaDisabledError } from '../errors';
import { SIMBA_OPTIONS } from '../simba.tokens';
import type { ResolvedSimbaOptions } from '../simba.options';
import { assertMutexName } from './mutex-contender';
import { MutexOwner } from './mutex-owner';
import { SimbaConnection } from './simba-connection';
import type { MutexRowRecord } from './mutex.repository';

/** A row of `simba_mutex`: its mutex and owner, read with the database clock (Simba's `MutexOwnerEntity`). */
export class MutexOwnerEntity extends MutexOwner {
  constructor(
    readonly mutex: string,
    owner: MutexOwner,
  ) {
    super(owner.ownerId, owner.acquiredAt, owner.ttlAt, owner.transitionAt, owner.version, owner.databaseNow);
  }

  override toJSON() {
    return { mutex: this.mutex, ...super.toJSON() };
  }
}

type OwnerRecord = MutexRowRecord & { mutex: unknown };

/**
 * Who owns which mutex, as `simba_mutex` says now (Simba's `MutexOwnerRepository`, reads only):
 * also mutexes this instance does not contend for, and rows Java Simba contenders wrote. Acquiring
 * and releasing stay with the contend services, which keep Holdfast's local deadline.
 */
@Injectable()
export class MutexOwnerRepository {
  constructor(
    private readonly connection: SimbaConnection,
    @Inject(SIMBA_OPTIONS) private readonly options: ResolvedSimbaOptions,
  ) {}

  /** The owner of `mutex`; MutexOwnerNotFoundError when the mutex has no row yet. */
  async getOwner(mutex: string): Promise<MutexOwnerEntity> {
    const owner = await this.findOwner(mutex);
    if (!owner) throw new MutexOwnerNotFoundError(mutex, this.connection.repository.queries.table);
    return owner;
  }

  /** The owner of `mutex`, or undefined when the mutex has no row yet. */
  async findOwner(mutex: string): Promise<MutexOwnerEntity | undefined> {
    assertMutexName(mutex);
    const [row] = await this.read(mutex, 'getOwner', (q) => q.select(mutex));
    return row;
  }

  /** Every mutex in the table with its owner (`ownerId` '' when free), by mutex name. */
  getOwners(): Promise<MutexOwnerEntity[]> {
    return this.read('*', 'getOwners', (q) => q.selectAll());
  }

  private async read(
    mutex: string,
    operation: string,
    statement: (queries: SimbaConnection['repository']['queries']) => Statement,
  ): Promise<MutexOwnerEntity[]> {
    if (!this.options.enabled) throw new SimbaDisabledError(`MutexOwnerRepository.${operation}()`);
    const { sql, queries } = this.connection.repository;
    const timeout = this.options.statementTimeout;
    return await withTimeout(
      async () => {
        const bound = queries.timed(statement(queries), timeout);
        const records = await sql.query<OwnerRecord>(bound);
        return records.map(
          (r) =>
            new MutexOwnerEntity(
              String(r.mutex),
              new MutexOwner(
                // CHAR(32) (Simba's DDL) comes back space-padded from PostgreSQL.
                r.owner_id == null ? '' : String(r.owner_id).trimEnd(),
                toNumber(r.acquired_at),
                toNumber(r.ttl_at),
                toNumber(r.transition_at),
                toNumber(r.version),
                toNumber(r.now_ms),
              ),
            ),
        );
      },
      timeout,
      () => {
        throw new MutexStatementTimeoutError(mutex, operation, timeout);
      },
    );
  }
}
