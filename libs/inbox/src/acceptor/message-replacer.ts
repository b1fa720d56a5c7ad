import type { CallerTransaction } from '../accept-tx/caller-transaction';
import type { InboxClock } from '../inbox.clock';
import type { AcceptResult } from '../inbox-message';
import type { InboxMetrics } from '../metrics/inbox.metrics';
import type { NewMessageRow } from '../store/cor-message.rows';
import type { InboxConnection } from '../store/inbox-connection';
import type { AcceptCounter } from './accept-counter';
import { acceptResults } from './accept-results';
import type { MessageInserter } from './message-inserter';

/** acceptAll's inserts of the rows given (without a repeated id), into `accepted`. */
export type InsertRest = (rows: readonly NewMessageRow[], accepted: Map<string, boolean>) => Promise<unknown>;

/**
 * Accepts with `onExisting` 'replace' or 'debounce' (see CorMessageReplace): the message that
 * has the id is accepted anew under it; an id that does not exist is inserted.
 */
export class MessageReplacer {
  constructor(
    private readonly connection: InboxConnection,
    private readonly clock: InboxClock,
    private readonly metrics: InboxMetrics,
    private readonly inserter: MessageInserter,
    private readonly counter: AcceptCounter,
  ) {}

  /**
   * One message on its own: the replace first (one UPDATE when the id exists, the usual case of
   * a debounce), else the insert; an id stored between the two is replaced then.
   */
  async acceptOne(row: NewMessageRow, mode: 'replace' | 'debounce'): Promise<AcceptResult> {
    const replace = async () => {
      const now = await this.clock.bindable();
      return this.metrics.retry('accept', () => this.connection.accept.replace(row, mode, now));
    };
    let replaced = await replace();
    const inserted = !replaced && (await this.inserter.insertOne(row));
    if (!replaced && !inserted) replaced = await replace();
    this.counter.count(Number(replaced || inserted), Number(!replaced && !inserted));
    return replaced ? { id: row.id, accepted: true, replaced } : { id: row.id, accepted: inserted };
  }

  /**
   * acceptAll with messages to replace or debounce: those are replaced first, one UPDATE each
   * (in the caller's transaction `tx` when given); the others, and those whose id did not exist,
   * are inserted as usual (`insertRest`: one call of acceptAll without them); an id stored
   * meanwhile by someone else is replaced then.
   */
  async acceptAll(
    rows: readonly NewMessageRow[],
    fresh: readonly NewMessageRow[],
    tx: CallerTransaction | undefined,
    insertRest: InsertRest,
  ): Promise<AcceptResult[]> {
    const store = tx ? this.connection.accept.through(tx.sql) : this.connection.accept;
    const now = await this.clock.bindable();
    const replaced = new Set<string>();
    const replaceAll = async (todo: readonly NewMessageRow[]) => {
      for (const row of todo) {
        const mode = row.onExisting!;
        const done = tx
          ? await store.replace(row, mode, now)
          : await this.metrics.retry('accept', () => store.replace(row, mode, now));
        if (done) replaced.add(row.id);
      }
    };
    await replaceAll(fresh.filter((r) => r.onExisting));
    const rest = fresh.filter((r) => !replaced.has(r.id));
    const accepted = new Map<string, boolean>(rest.map((r) => [r.id, false]));
    if (rest.length) await insertRest(rest, accepted);
    await replaceAll(fresh.filter((r) => r.onExisting && !replaced.has(r.id) && !accepted.get(r.id)));
    if (replaced.size) {
      if (tx) this.counter.countIn(tx, replaced.size, 0);
      else this.counter.count(replaced.size, 0);
    }
    return acceptResults(rows, accepted, replaced);
  }
}
