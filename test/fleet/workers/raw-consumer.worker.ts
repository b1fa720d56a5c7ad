/**
 * The baseline of the fleet bench's delivery (#46 item 3): the pg driver doing the inbox's job by
 * hand in one process of a fleet, no Holdfast, no Nest: Holdfast's claim statement on PostgreSQL
 * (its largest claim at the default batchSize, 1,000), the payload decoded, a no-op handler, a
 * delete of the claim's ids with its lease; one connection claiming, one deleting and listening
 * for the accepts' notifications (an empty claim waits for one, or 1 s).
 * Config: JSON in HOLDFAST_RAW_CONSUMER ({ url, table, channel }).
 * IPC out: {t:'ready'}, {t:'delivered', ids} (every 100 ms). IPC in: {t:'stop'}.
 */
import { Client } from 'pg';
import { largestClaim } from '../../../libs/inbox/src/delivery/delivery-settings';

const config = JSON.parse(process.env.HOLDFAST_RAW_CONSUMER ?? '{}') as {
  url: string;
  table: string;
  channel: string;
};
const send = (message: object) => process.connected && process.send?.(message);

const millis = (t: string) => `CAST(FLOOR(EXTRACT(EPOCH FROM ${t}) * 1000) AS BIGINT)`;

/** The claim Holdfast sends on PostgreSQL (ungrouped, no unanswered leases), written by hand. */
export function rawClaim(table: string): string {
  const now = "date_trunc('milliseconds', statement_timestamp())";
  return (
    `WITH claimed AS (UPDATE ${table} SET NEXT_RETRY = CAST($1 AS TIMESTAMPTZ) WHERE ctid = ANY(ARRAY(` +
    `SELECT ctid FROM ${table} WHERE COALESCE((RETRIES < 5 AND (NEXT_RETRY IS NULL OR NEXT_RETRY <= ${now}) ` +
    `AND (EXPIRATION IS NULL OR EXPIRATION > ${now})), FALSE) ORDER BY INSERTED, ID ` +
    `LIMIT ${largestClaim(100)} FOR UPDATE SKIP LOCKED)) RETURNING ID AS id, PAYLOAD AS payload, ` +
    `${millis('INSERTED')} AS inserted_ms, RETRIES AS retries, INSERTED AS ord_inserted) ` +
    `SELECT id, payload, inserted_ms, retries FROM claimed ORDER BY ord_inserted, id`
  );
}

async function main(): Promise<void> {
  const claims = new Client({ connectionString: config.url });
  const deletes = new Client({ connectionString: config.url });
  await Promise.all([claims.connect(), deletes.connect()]);
  let wake: (() => void) | undefined;
  deletes.on('notification', () => wake?.());
  await deletes.query(`LISTEN "${config.channel}"`);
  const claimSql = rawClaim(config.table);
  const deleteSql = `DELETE FROM ${config.table} WHERE ID = ANY($1::VARCHAR[]) AND NEXT_RETRY = CAST($2 AS TIMESTAMPTZ)`;
  let stopped = false;
  let delivered: string[] = [];
  const flush = setInterval(() => {
    if (!delivered.length) return;
    send({ t: 'delivered', ids: delivered });
    delivered = [];
  }, 100);
  process.on('message', (m: { t: string }) => {
    if (m.t !== 'stop') return;
    stopped = true;
    wake?.();
    clearInterval(flush);
    if (delivered.length) send({ t: 'delivered', ids: delivered });
    void Promise.allSettled([claims.end(), deletes.end()]).finally(() => process.exit(0));
  });
  send({ t: 'ready' });
  let deleting: Promise<unknown> = Promise.resolve();
  while (!stopped) {
    const lease = new Date(Date.now() + 300_000).toISOString();
    const { rows } = await claims.query({ name: 'claim', text: claimSql, values: [lease] });
    if (!rows.length) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 1_000);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
      continue;
    }
    const ids: string[] = [];
    for (const row of rows as Array<{ id: string; payload: Buffer }>) {
      JSON.parse(row.payload.toString('utf8')); // what a handler gets: the payload decoded
      ids.push(row.id);
    }
    delivered.push(...ids);
    deleting = deleting.then(() => deletes.query({ name: 'delete', text: deleteSql, values: [ids, lease] }));
  }
}

// A consumer whose parent died ends too, instead of living on.
if (process.env.HOLDFAST_RAW_CONSUMER) process.on('disconnect', () => process.exit(0));
if (process.env.HOLDFAST_RAW_CONSUMER)
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
