import { statement, type SqlClient } from '@holdfast/core/kit';
import type { DoctorCheck } from './doctor-report';
import { field } from './sql-rows';

/**
 * Galera (MariaDB Galera Cluster, Percona XtraDB Cluster): a row lock is local to the node that
 * took it, so the `database` locker's held SELECT … FOR UPDATE lets one master per node.
 */
export async function galeraCheck(sql: SqlClient, locker: string | undefined): Promise<DoctorCheck> {
  const rows = (await sql.query(statement("SHOW GLOBAL STATUS LIKE 'wsrep_cluster_size'"))) as Record<
    string,
    unknown
  >[];
  const size = Number(field(rows[0] ?? {}, 'Value') ?? 0);
  if (!size)
    return { check: 'galera', status: 'ok', detail: 'not a Galera cluster node (no wsrep_cluster_size)' };
  const detail = `a Galera cluster node (wsrep_cluster_size ${size})`;
  const fix =
    "use the 'lease-database' locker (LockerModule locker: { type: 'lease-database' }): Galera does not " +
    "replicate row locks, so the 'database' locker's SELECT … FOR UPDATE makes one master per node";
  if (locker === 'database')
    return { check: 'galera', status: 'failure', detail: `${detail} and the 'database' locker`, fix };
  if (locker === undefined)
    return {
      check: 'galera',
      status: 'warning',
      detail: `${detail}; which locker the application uses is not known here (--locker)`,
      fix,
    };
  return { check: 'galera', status: 'ok', detail: `${detail} with the '${locker}' locker` };
}
