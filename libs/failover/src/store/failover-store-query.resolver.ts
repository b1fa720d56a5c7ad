import { Injectable } from '@nestjs/common';
import { StatementBinder, statement, type SqlDialect, type Statement } from '@holdfast/core/kit';
import { deleteLimited } from '@holdfast/core/kit';

export interface FailoverQueryContext {
  /** The prefixed, validated table name. */
  table: string;
  dialect: SqlDialect;
  /** false: statements do not read the database clock (unknown dialect). Default true. */
  clock?: boolean;
}

/** One row of the store as bound: the timestamps and PAYLOAD already in the driver's form. */
export interface FailoverRowValues {
  name: string;
  key: string;
  asOf: unknown;
  expireOn: unknown;
  payload: unknown;
  payloadClass: string;
}

/** The cleanup lease to take: `now` is the database clock, `expireOn` the lease's end. */
export interface FailoverLeaseValues {
  name: string;
  key: string;
  asOf: unknown;
  expireOn: unknown;
  payload: unknown;
  now: unknown;
}

const COLUMNS = ['FAILOVER_NAME', 'FAILOVER_KEY', 'AS_OF', 'EXPIRE_ON', 'PAYLOAD', 'PAYLOAD_CLASS'] as const;
const KEYS = ['FAILOVER_NAME', 'FAILOVER_KEY'] as const;

const rowParams = (row: FailoverRowValues): unknown[] => [
  row.name,
  row.key,
  row.asOf,
  row.expireOn,
  row.payload,
  row.payloadClass,
];

/**
 * All SQL of the failover store, in one place, built from the dialect's pieces: each method
 * returns the statement (text and parameters) for the values it is given. Replace it (pass your
 * subclass as `store.queryResolver`, or provide it under `FailoverStoreQueryResolver`) to tune a
 * statement for your database.
 *
 * The point read (`find`) and the one-row `upsert` are the calls' own statements: the store
 * builds them once and sends their text again with each call's values, in the order the default
 * binds them, (name, key) and (name, key, asOf, expireOn, payload, payloadClass); a replacement
 * keeps those orders. `find` also returns the database clock as db_now (ms) unless `ctx.clock`
 * is false.
 */
@Injectable()
export class FailoverStoreQueryResolver {
  upsert(ctx: FailoverQueryContext, rows: readonly FailoverRowValues[]): Statement {
    const text = ctx.dialect.upsert({ table: ctx.table, columns: COLUMNS, keys: KEYS, rows: rows.length });
    return statement(text, rows.flatMap(rowParams));
  }

  insert(ctx: FailoverQueryContext, row: FailoverRowValues): Statement {
    const b = new StatementBinder(ctx.dialect);
    return b.statement(`INSERT INTO ${ctx.table} (${COLUMNS.join(', ')}) VALUES (${b.list(rowParams(row))})`);
  }

  update(ctx: FailoverQueryContext, row: FailoverRowValues): Statement {
    const b = new StatementBinder(ctx.dialect);
    return b.statement(
      `UPDATE ${ctx.table} SET AS_OF = ${b.bind(row.asOf)}, EXPIRE_ON = ${b.bind(row.expireOn)}, ` +
        `PAYLOAD = ${b.bind(row.payload)}, PAYLOAD_CLASS = ${b.bind(row.payloadClass)} ` +
        `WHERE FAILOVER_NAME = ${b.bind(row.name)} AND FAILOVER_KEY = ${b.bind(row.key)}`,
    );
  }

  find(ctx: FailoverQueryContext, name: string, key: string): Statement {
    const b = new StatementBinder(ctx.dialect);
    return b.statement(
      `SELECT AS_OF AS as_of, EXPIRE_ON AS expire_on, PAYLOAD AS payload, PAYLOAD_CLASS AS payload_class` +
        `${ctx.clock === false ? '' : `, ${ctx.dialect.nowMillis} AS db_now`} FROM ${ctx.table} ` +
        `WHERE FAILOVER_NAME = ${b.bind(name)} AND FAILOVER_KEY = ${b.bind(key)}`,
    );
  }

  /**
   * The point read of several keys of one failover at once: `find`'s columns and FAILOVER_KEY
   * (failover_key), bound as (name, ...keys). The store sends it for reads that wait while others
   * are in flight (see FailoverSqlReads); a replacement of `find` alone turns that off.
   */
  findMany(ctx: FailoverQueryContext, name: string, keys: readonly string[]): Statement {
    const b = new StatementBinder(ctx.dialect);
    return b.statement(
      `SELECT FAILOVER_KEY AS failover_key, AS_OF AS as_of, EXPIRE_ON AS expire_on, PAYLOAD AS payload, ` +
        `PAYLOAD_CLASS AS payload_class${ctx.clock === false ? '' : `, ${ctx.dialect.nowMillis} AS db_now`} ` +
        `FROM ${ctx.table} WHERE FAILOVER_NAME = ${b.bind(name)} AND FAILOVER_KEY IN (${b.list(keys)})`,
    );
  }

  findAll(ctx: FailoverQueryContext, name: string): Statement {
    const b = new StatementBinder(ctx.dialect);
    return b.statement(
      `SELECT FAILOVER_KEY AS failover_key, AS_OF AS as_of, EXPIRE_ON AS expire_on, PAYLOAD AS payload, ` +
        `PAYLOAD_CLASS AS payload_class FROM ${ctx.table} WHERE FAILOVER_NAME = ${b.bind(name)}`,
    );
  }

  delete(ctx: FailoverQueryContext, name: string, key: string): Statement {
    const b = new StatementBinder(ctx.dialect);
    return b.statement(
      `DELETE FROM ${ctx.table} WHERE FAILOVER_NAME = ${b.bind(name)} AND FAILOVER_KEY = ${b.bind(key)}`,
    );
  }

  cleanByExpiry(ctx: FailoverQueryContext, cutoff: unknown): Statement {
    const b = new StatementBinder(ctx.dialect);
    return b.statement(`DELETE FROM ${ctx.table} WHERE EXPIRE_ON < ${b.bind(cutoff)}`);
  }

  /**
   * One bounded batch of the expiry cleanup: at most `limit` rows, found through the EXPIRE_ON
   * index, so a statement locks only the rows it deletes (a caller re-storing one of them waits
   * for this batch, never for the whole cleanup).
   */
  cleanBatch(ctx: FailoverQueryContext, cutoff: unknown, limit: number): Statement {
    const b = new StatementBinder(ctx.dialect);
    const where = `EXPIRE_ON < ${b.bind(cutoff)}`;
    return b.statement(deleteLimited(ctx.dialect, { table: ctx.table, where, orderBy: 'EXPIRE_ON', limit }));
  }

  /** Takes the cleanup lease row if it has expired; 1 row updated = claimed. */
  claimLease(ctx: FailoverQueryContext, lease: FailoverLeaseValues): Statement {
    const b = new StatementBinder(ctx.dialect);
    return b.statement(
      `UPDATE ${ctx.table} SET AS_OF = ${b.bind(lease.asOf)}, EXPIRE_ON = ${b.bind(lease.expireOn)}, ` +
        `PAYLOAD = ${b.bind(lease.payload)} WHERE FAILOVER_NAME = ${b.bind(lease.name)} ` +
        `AND FAILOVER_KEY = ${b.bind(lease.key)} AND EXPIRE_ON < ${b.bind(lease.now)}`,
    );
  }

  count(ctx: FailoverQueryContext, name: string): Statement {
    const b = new StatementBinder(ctx.dialect);
    return b.statement(`SELECT COUNT(*) AS n FROM ${ctx.table} WHERE FAILOVER_NAME = ${b.bind(name)}`);
  }

  countLive(ctx: FailoverQueryContext, name: string, now: unknown): Statement {
    const b = new StatementBinder(ctx.dialect);
    return b.statement(
      `SELECT COUNT(*) AS n FROM ${ctx.table} WHERE FAILOVER_NAME = ${b.bind(name)} AND EXPIRE_ON >= ${b.bind(now)}`,
    );
  }
}
