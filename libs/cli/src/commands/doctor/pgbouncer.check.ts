import type { DataSource } from 'typeorm';
import type { DoctorCheck } from './doctor-report';

/**
 * PgBouncer in transaction (or statement) mode hands each transaction of one client connection to
 * whichever server connection is free: a session's LISTEN, advisory locks, SET and prepared
 * statements do not survive. Seen from a client as a server process id that changes between
 * transactions of one connection. An idle bouncer hands a client the same server connection
 * again (the last one freed), so two client connections hold a transaction each and end them in
 * turn: the next transaction of the first lands on the second's server connection.
 */
export async function pgbouncerCheck(dataSource: DataSource): Promise<DoctorCheck> {
  const x = dataSource.createQueryRunner();
  const y = dataSource.createQueryRunner();
  const pid = async (runner: typeof x) =>
    Number((await runner.query('SELECT pg_backend_pid() AS pid'))[0].pid);
  const seen: number[] = [];
  try {
    for (const [first, second] of [
      [x, y],
      [y, x],
    ] as const) {
      await x.query('BEGIN');
      seen.push(await pid(x));
      await y.query('BEGIN');
      await pid(y);
      await first.query('COMMIT');
      await second.query('COMMIT');
      seen.push(await pid(x));
    }
  } finally {
    await x.release();
    await y.release();
  }
  if (new Set(seen).size === 1) {
    return {
      check: 'pgbouncer',
      status: 'ok',
      detail: `one server process (pid ${seen[0]}) served every transaction of one connection: a direct connection or session pooling`,
    };
  }
  return {
    check: 'pgbouncer',
    status: 'warning',
    detail: `the transactions of one connection ran on server processes ${[...new Set(seen)].join(', ')}: a pooler in transaction mode (PgBouncer pool_mode=transaction)`,
    fix:
      "Holdfast's statements work through it, but not LISTEN (see the listen check): give the inbox's listener a " +
      'direct connection or a session-mode pool (InboxModule notifyListenUrl), and the coordination lanes a ' +
      'PgBouncer database of their own (docs/operations.md, Pool sizing)',
  };
}
