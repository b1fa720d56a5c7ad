import type { SqlDialect } from '@holdfast/core/kit';
import type { PayloadCodec } from '../payload/payload-codec';
import type { PayloadType } from '../payload/payload-type';
import type { FailoverEntry } from './failover-store';
import type { FailoverRowValues } from './failover-store-query.resolver';
import type { PayloadColumnResolver } from './payload-column.resolver';

/** A row of the store as read: the columns of `find` (and db_now when it read the clock). */
export interface FailoverRow {
  db_now?: unknown;
  as_of: unknown;
  expire_on: unknown;
  payload: unknown;
  payload_class: string;
}

/** Where an entry read from a row is for, and the class its payload is rebuilt as. */
export interface EntryOrigin {
  name: string;
  key: string;
  type?: PayloadType;
}

/**
 * Entries to rows and back: the payload through the codec (JSON and its class) and the PAYLOAD
 * resolver, the timestamps through the dialect.
 */
export class FailoverRowCodec {
  constructor(
    readonly payloadColumn: PayloadColumnResolver,
    private readonly codec: PayloadCodec,
  ) {}

  /** The row of `entry`, bound for `dialect`. */
  values(entry: FailoverEntry<unknown>, dialect: SqlDialect, type?: PayloadType): FailoverRowValues {
    const { payload, payloadClass } = this.codec.encode(entry.payload, type, entry.name);
    return {
      name: entry.name,
      key: entry.key,
      asOf: dialect.timestampParam(entry.asOf),
      expireOn: dialect.timestampParam(entry.expireOn),
      payload: this.payloadColumn.bind(payload, dialect),
      payloadClass,
    };
  }

  /** The entry of a row's columns. */
  entry<T>(row: FailoverRow, origin: EntryOrigin, dialect: SqlDialect): FailoverEntry<T> {
    const { name, key, type } = origin;
    const json = this.payloadColumn.read(row.payload, name, row.payload_class);
    return {
      name,
      key,
      asOf: dialect.readTimestamp(row.as_of),
      expireOn: dialect.readTimestamp(row.expire_on),
      payload: this.codec.decode<T>(name, json, row.payload_class, type),
    };
  }
}
