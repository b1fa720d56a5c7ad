import { type SqlClient, StatementBinder } from '@holdfast/core/kit';
import type { ClaimLease, Claimed, CorMessageClaim, CorMessageClaimTerms, Hold } from './cor-message.claim';
import type { Candidate, CandidateRead, CandidateSource } from './cor-message.claim-by-keys';
import type { CorMessageClaimOneStatement } from './cor-message.claim-one-statement';
import { fairKeysCte, type FairShareLayout } from './cor-message.fair-share';
import type { PausedTypeFilter } from './cor-message.paused';
import type { CorMessageShared } from './cor-message.shared';
import type { Now } from './cor-message.rows';
import { forceIndex, indexWalkFilter, rowAddress } from './inbox-sql.dialect';

/**
 * Each key's read names its key as a range (`k <= PAYLOAD_TYPE_NAME <= k`, not `= k`) and is
 * ordered as the type index is (PAYLOAD_TYPE_NAME, INSERTED, ID), which only that index hands
 * out without a sort. With `= k` PostgreSQL takes the key for a constant, orders by (INSERTED,
 * ID) alone, and with statistics that saw one type only walks the delivery-order index with a
 * filter on the type: through the whole hot backlog for each quiet type accepted after it
 * (EXPLAIN ANALYZE on 100,000 rows: 95,409 rows filtered per key, 682 ms a claim).
 *
 * Fair share on PostgreSQL and SQLite (see COR_MESSAGE_TYPE_INDEX): still one statement. The
 * keys by a skip scan of the type index; for each key its first `perKey` due messages from the
 * start of its range; of those the first of every key, then the second of every key, … up to
 * the claim's size; leased as the plain claim leases.
 *
 * PostgreSQL locks each key's picks as it reads them (`FOR UPDATE SKIP LOCKED` inside the
 * LATERAL read of that key): at most `perKey` rows a key, the rows beyond the claim's size
 * free again when the statement ends (it commits on its own). SQLite's single writer holds the
 * write lock for the statement.
 */
export class FairClaimInOneStatement implements CorMessageClaim {
  constructor(
    private readonly on: CorMessageShared,
    private readonly terms: CorMessageClaimTerms,
    /** The plain claim, which runs and reads the statement built here. */
    private readonly plain: CorMessageClaimOneStatement,
  ) {}

  async claim(
    limit: number,
    now: Now,
    leaseOf: ClaimLease,
    hold?: Hold,
    paused: readonly PausedTypeFilter[] = [],
  ): Promise<Claimed> {
    const fair = this.on.fairShare!;
    const d = this.on.d;
    const table = this.on.table;
    const b = new StatementBinder(d);
    const read = { leaseKnown: typeof leaseOf !== 'number' };
    const keys = fairKeysCte(table);
    const perKey = Math.trunc(fair.perKey);
    let text: string;
    if (d.writableCte) {
      const key = rowAddress(d) ?? 'ID';
      const due = indexWalkFilter(d, this.terms.due(b, now, leaseOf, paused));
      const ofKey = d.limit(
        `SELECT ${key} AS hf_addr, INSERTED AS hf_ins, ID AS hf_id FROM ${table} ` +
          `WHERE PAYLOAD_TYPE_NAME >= hf_keys.k AND PAYLOAD_TYPE_NAME <= hf_keys.k AND ${due} ORDER BY PAYLOAD_TYPE_NAME, INSERTED, ID`,
        perKey,
      );
      const ranked =
        `SELECT s.hf_addr, s.hf_ins, s.hf_id, ROW_NUMBER() OVER (ORDER BY s.hf_ins, s.hf_id) AS hf_rn ` +
        `FROM (${ofKey}${d.forUpdate(true)}) s`;
      const picked = d.limit(
        `SELECT p.hf_addr FROM hf_keys CROSS JOIN LATERAL (${ranked}) p ORDER BY p.hf_rn, p.hf_ins, p.hf_id`,
        limit,
      );
      const lease = this.terms.leaseEnd(b, now, leaseOf);
      const dbNow = `${this.on.claimClock(b, now)} AS db_now`;
      text =
        `${keys}, hf_picked AS (${picked}), ` +
        `claimed AS (UPDATE ${table} SET NEXT_RETRY = ${lease} WHERE ${d.keyIn(key, 'SELECT hf_addr FROM hf_picked')} ` +
        `RETURNING ${dbNow}, ${this.on.columns(true, read)}, INSERTED AS ord_inserted) ` +
        `SELECT db_now, ${this.on.columnAliases(true, read)} FROM claimed ORDER BY ord_inserted, id`;
    } else {
      // SQLite: bound in the order the placeholders appear (the lease first, then the due condition).
      const lease = this.terms.leaseEnd(b, now, leaseOf);
      const due = this.terms.due(b, now, leaseOf, paused);
      const dbNow = `${this.on.claimClock(b, now)} AS db_now`;
      const ofKey = d.limit(
        `SELECT ID FROM ${table} WHERE PAYLOAD_TYPE_NAME >= hf_keys.k AND PAYLOAD_TYPE_NAME <= hf_keys.k AND ${due} ORDER BY PAYLOAD_TYPE_NAME, INSERTED, ID`,
        perKey,
      );
      const ranked =
        `SELECT hf_m.ID AS hf_id, hf_m.INSERTED AS hf_ins, ` +
        `ROW_NUMBER() OVER (PARTITION BY hf_keys.k ORDER BY hf_m.INSERTED, hf_m.ID) AS hf_rn ` +
        `FROM hf_keys JOIN ${table} hf_m ON hf_m.ID IN (${ofKey})`;
      const picked = d.limit(`SELECT hf_id FROM (${ranked}) ORDER BY hf_rn, hf_ins, hf_id`, limit);
      text =
        `${keys} UPDATE ${table} SET NEXT_RETRY = ${lease} WHERE ID IN (${picked}) ` +
        `RETURNING ${dbNow}, ${this.on.columns(true, read)}`;
    }
    return this.plain.run(b.statement(text), now, leaseOf, hold);
  }
}

/**
 * Fair share on MySQL/MariaDB: the candidates are each key's first `perKey` due messages (a
 * plain read: the keys by a skip scan, then one range of the forced type index per key), cut
 * round by round to the claim's size; the locking read and the lease are CorMessageClaimByKeys' own (this is its candidate source), so
 * the claim still locks only the rows it takes (and candidates another node took meanwhile are
 * skipped). One round of candidates: a claim whose candidates were all taken by another node
 * comes back short, and the next one reads again.
 */
export class FairCandidates implements CandidateSource {
  constructor(
    private readonly on: CorMessageShared,
    private readonly terms: CorMessageClaimTerms,
  ) {}

  async candidates(tx: SqlClient, read: CandidateRead): Promise<Candidate[]> {
    if (read.after) return [];
    const fair = this.on.fairShare as FairShareLayout;
    const d = this.on.d;
    const table = this.on.table;
    const hint = fair.indexed ? forceIndex(d, fair.index) : '';
    // The keys by InnoDB's own skip scan ("Using index for group-by": one probe per key). The
    // recursive CTE of the other databases reads the whole index for each key here: its
    // correlated MIN is no range to InnoDB (MariaDB 10.11's ANALYZE on 100,000 rows: 100,000
    // index entries read per key).
    const keyRows = await tx.query<{ k: string }>(
      new StatementBinder(d).statement(
        `SELECT PAYLOAD_TYPE_NAME AS k FROM ${table} ${hint}GROUP BY PAYLOAD_TYPE_NAME`,
      ),
    );
    if (!keyRows.length) return [];
    const b = new StatementBinder(d);
    // `= k` and ORDER BY INSERTED, ID: the forced index's range in its order. Naming the key in
    // the ORDER BY too (as PostgreSQL needs, see FairClaimInOneStatement) makes MariaDB sort
    // the whole range ("Using filesort": 450–800 ms a claim beside 100,000 hot messages).
    const parts = keyRows.map(
      ({ k }) =>
        `(${d.limit(
          `SELECT ID AS id, ${this.on.t.read('INSERTED')} AS inserted_ms, ${b.bind(k)} AS hf_k FROM ${table} ${hint}` +
            `WHERE PAYLOAD_TYPE_NAME = ${b.bind(k)} AND ${this.terms.due(b, read.now, read.lease, read.paused)} ORDER BY INSERTED, ID`,
          Math.trunc(fair.perKey),
        )})`,
    );
    const rows = await tx.query<Candidate & { hf_k: string }>(b.statement(parts.join(' UNION ALL ')));
    // Each key's candidates in delivery order (a UNION ALL keeps no order), numbered within the key.
    type Ranked = { row: Candidate & { hf_k: string }; at: number; n: number };
    const byOrder = (x: Ranked, y: Ranked) =>
      x.at - y.at || (x.row.id < y.row.id ? -1 : x.row.id > y.row.id ? 1 : 0);
    const ranked: Ranked[] = rows.map((row) => ({ row, at: this.on.t.toMillis(row.inserted_ms), n: 0 }));
    ranked.sort((x, y) => (x.row.hf_k < y.row.hf_k ? -1 : x.row.hf_k > y.row.hf_k ? 1 : byOrder(x, y)));
    ranked.forEach(
      (r, i) => (r.n = i > 0 && ranked[i - 1].row.hf_k === r.row.hf_k ? ranked[i - 1].n + 1 : 1),
    );
    ranked.sort((x, y) => x.n - y.n || byOrder(x, y));
    return ranked
      .slice(0, read.limit)
      .sort(byOrder)
      .map(({ row }) => ({ id: row.id, inserted_ms: row.inserted_ms }));
  }
}
