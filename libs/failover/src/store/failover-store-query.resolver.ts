import { Injectable } from '@nestjs/common';
import type { SqlDialect } from '@holdfast/core/kit';

export interface FailoverQueryContext {
  /** The prefixed, validated table name. */
  table: string;
  dialect: SqlDialect;
  /** false: statements do not read the database clock (unknown dialect). Default true. */
  clock?: boolean;
}

const COLUMNS = ['FAILOVER_NAME', 'FAILOVER_KEY', 'AS_OF', 'EXPIRE_ON', 'PAYLOAD', 'PAYLOAD_CLASS'] as const;
const KEYS = ['FAILOVER_NAME', 'FAILOVER_KEY'] as const;

/**
 * All SQL of the failover store, in one place, built from the dialect's pieces. Replace it
 * (pass your subclass as `store.queryResolver`) to tune a statement for your database.
 *
 * Parameter orders:
 *  upsert / insert  (name, key, asOf, expireOn, payload, payloadClass) [× rows for upsert]
 *  update           (asOf, expireOn, payload, payloadClass, name, key)
 *  find / delete    (name, key); find also returns the database clock as db_now (ms)
 *  findAll / count  (name)
 *  countLive        (name, now)
 *  cleanByExpiry    (cutoff); cleanBatch (cutoff), at most `limit` rows
 *  claimLease       (asOf, expireOn, payload, name, key, now)
 */
@Injectable()
export class FailoverStoreQueryResolver {
  upsert(ctx: FailoverQueryContext, rows = 1): string {
    return ctx.dialect.upsert({ table: ctx.table, columns: COLUMNS, keys: KEYS, rows });
  }

  insert(ctx: FailoverQueryContext): string {
    return `INSERT INTO ${ctx.table} (${COLUMNS.join(', ')}) VALUES (${ctx.dialect.placeholders(COLUMNS.length)})`;
  }

  update(ctx: FailoverQueryContext): string {
    const p = (i: number) => ctx.dialect.placeholder(i);
    return (
      `UPDATE ${ctx.table} SET AS_OF = ${p(1)}, EXPIRE_ON = ${p(2)}, PAYLOAD = ${p(3)}, PAYLOAD_CLASS = ${p(4)} ` +
      `WHERE FAILOVER_NAME = ${p(5)} AND FAILOVER_KEY = ${p(6)}`
    );
  }

  find(ctx: FailoverQueryContext): string {
    const p = (i: number) => ctx.dialect.placeholder(i);
    return (
      `SELECT AS_OF AS as_of, EXPIRE_ON AS expire_on, PAYLOAD AS payload, PAYLOAD_CLASS AS payload_class` +
      `${ctx.clock === false ? '' : `, ${ctx.dialect.nowMillis} AS db_now`} FROM ${ctx.table} WHERE FAILOVER_NAME = ${p(1)} AND FAILOVER_KEY = ${p(2)}`
    );
  }

  findAll(ctx: FailoverQueryContext): string {
    return (
      `SELECT FAILOVER_KEY AS failover_key, AS_OF AS as_of, EXPIRE_ON AS expire_on, PAYLOAD AS payload, ` +
      `PAYLOAD_CLASS AS payload_class FROM ${ctx.table} WHERE FAILOVER_NAME = ${ctx.dialect.placeholder(1)}`
    );
  }

  delete(ctx: FailoverQueryContext): string {
    const p = (i: number) => ctx.dialect.placeholder(i);
    return `DELETE FROM ${ctx.table} WHERE FAILOVER_NAME = ${p(1)} AND FAILOVER_KEY = ${p(2)}`;
  }

  cleanByExpiry(ctx: FailoverQueryContext): string {
    return `DELETE FROM ${ctx.table} WHERE EXPIRE_ON < ${ctx.dialect.placeholder(1)}`;
  }

  /**
   * One bounded batch of the expiry cleanup: at most `limit` rows, found through the EXPIRE_ON
   * index, so a statement locks only the rows it deletes (a caller re-storing one of them waits
   * for this batch, never for the whole cleanup). Parameter: the cutoff.
   */
  cleanBatch(ctx: FailoverQueryContext, limit: number): string {
    return ctx.dialect.deleteLimited({
      table: ctx.table,
      where: `EXPIRE_ON < ${ctx.dialect.placeholder(1)}`,
      orderBy: 'EXPIRE_ON',
      limit,
    });
  }

  /**
   * Takes the cleanup lease row if it has expired. Parameters: (asOf, expireOn, payload, name,
   * key, now); 1 row updated = claimed.
   */
  claimLease(ctx: FailoverQueryContext): string {
    const p = (i: number) => ctx.dialect.placeholder(i);
    return (
      `UPDATE ${ctx.table} SET AS_OF = ${p(1)}, EXPIRE_ON = ${p(2)}, PAYLOAD = ${p(3)} ` +
      `WHERE FAILOVER_NAME = ${p(4)} AND FAILOVER_KEY = ${p(5)} AND EXPIRE_ON < ${p(6)}`
    );
  }

  count(ctx: FailoverQueryContext): string {
    return `SELECT COUNT(*) AS n FROM ${ctx.table} WHERE FAILOVER_NAME = ${ctx.dialect.placeholder(1)}`;
  }

  countLive(ctx: FailoverQueryContext): string {
    const p = (i: number) => ctx.dialect.placeholder(i);
    return `SELECT COUNT(*) AS n FROM ${ctx.table} WHERE FAILOVER_NAME = ${p(1)} AND EXPIRE_ON >= ${p(2)}`;
  }
}
