import { PgListener, statement, withTimeout, type SqlClient } from '@holdfast/core/kit';
import type { DataSource } from 'typeorm';
import { redact } from '../../database-url';
import type { DoctorCheck } from './doctor-report';

/**
 * The path the inbox's wake-ups take: LISTEN on a dedicated connection (the inbox's own
 * PgListener, on `listenUrl` when the application sets `notifyListenUrl`), NOTIFY through the
 * DataSource, heard within the timeout. Behind a transaction-mode pooler the LISTEN succeeds and
 * hears nothing, and delivery falls back to polling.
 */
export async function listenCheck(
  sql: SqlClient,
  dataSource: DataSource,
  timeoutMs: number,
  listenUrl: string | undefined,
): Promise<DoctorCheck> {
  const channel = `holdfast_doctor_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const through = listenUrl ? `through ${redact(listenUrl)}` : "on the DataSource's connection options";
  const fix =
    "give the inbox's LISTEN a connection to the server itself or to a session-mode pool " +
    '(InboxModule notifyListenUrl; check it with doctor --listen-url): until then delivery wakes only at its poll interval';
  let heard!: () => void;
  const notified = new Promise<void>((resolve) => (heard = resolve));
  const listener = new PgListener(dataSource, {
    channel,
    connectionString: listenUrl,
    applicationName: 'holdfast doctor',
    connectTimeoutMs: timeoutMs,
    onNotification: () => heard(),
    onDropped: () => undefined,
  });
  try {
    await listener.listen();
    await sql.query(statement(`SELECT pg_notify('${channel}', 'doctor')`));
    const ok = await withTimeout(
      notified.then(() => true),
      timeoutMs,
      () => false,
    );
    if (ok)
      return {
        check: 'listen',
        status: 'ok',
        detail: `a NOTIFY through the DataSource was heard by LISTEN ${through}`,
      };
    return {
      check: 'listen',
      status: 'warning',
      detail: `a NOTIFY through the DataSource was not heard within ${timeoutMs} ms by LISTEN ${through}`,
      fix,
    };
  } catch (error) {
    return {
      check: 'listen',
      status: 'warning',
      detail: `LISTEN ${through} failed: ${error instanceof Error ? error.message : String(error)}`,
      fix,
    };
  } finally {
    await listener.close();
  }
}
