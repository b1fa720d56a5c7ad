import { Mutex } from 'async-mutex';
import type { DataSource } from 'typeorm';

/** One in-process gate per SQLite DataSource: TypeORM shares one connection between runners. */
const sqliteGates = new WeakMap<DataSource, Mutex>();

/**
 * The SQLite DataSource's in-process gate: whoever holds it has the one shared connection to
 * itself (a transaction, a session), and a statement outside them waits for it. One gate per
 * DataSource, shared by every SqlClient (and anything else) that runs SQL on it.
 */
export function sqliteGate(dataSource: DataSource): Mutex {
  let gate = sqliteGates.get(dataSource);
  if (!gate) sqliteGates.set(dataSource, (gate = new Mutex()));
  return gate;
}
