import { createHash } from 'node:crypto';
import { Logger } from '@nestjs/common';

/** What PgStatementNames needs of a pg Pool or Client. */
interface PgQueryable {
  query(config: { text: string; values: unknown[]; name?: string }): Promise<PgResult>;
}

/** What pg answers a query with (the parts Holdfast reads). */
export interface PgResult {
  rows: unknown[];
  rowCount: number | null;
}

/**
 * Errors that say the server connection does not hold the named statement the client
 * expects: `26000` invalid_sql_statement_name (it was never prepared there: a pooler handed the
 * client another server connection, or something ran DEALLOCATE/DISCARD), `42P05`
 * duplicate_prepared_statement (another client prepared it there first), `0A000`
 * feature_not_supported (the table changed under a kept plan: "cached plan must not change
 * result type").
 */
function unusable(error: { code?: string; message?: string }): boolean {
  if (error?.code === '26000' || error?.code === '42P05') return true;
  return error?.code === '0A000' && /cached plan/i.test(String(error.message));
}

/** Distinct statement texts kept named at most; past it, new texts run unnamed. */
const MAX_NAMES = 256;

/**
 * Named (prepared) statements for the hot statements of fixed text on PostgreSQL: the server
 * parses and plans such a statement once per connection instead of at every call, which is most
 * of the cost of a short claim or point read. Opt-in per call (`prepared`), never inside a
 * transaction (those go through TypeORM's QueryRunner).
 *
 * A statement's name is a hash of its text, so one name never stands for two texts, whichever
 * process prepared it on whichever server connection. Behind a pooler that moves a client between
 * server connections (PgBouncer in transaction mode before 1.21, or without
 * `max_prepared_statements`), the first call that finds its statement missing fails with one of
 * those errors before anything ran: it runs again unnamed, named statements stop for this pool,
 * and one warning says why.
 */
export class PgStatementNames {
  private readonly logger = new Logger('HoldfastSql');
  private readonly names = new Map<string, string>();
  private enabled = process.env.HOLDFAST_PG_PREPARED !== 'false';

  run(target: PgQueryable, text: string, params: readonly unknown[], prepared?: boolean): Promise<PgResult> {
    const values = params as unknown[];
    const name = prepared && this.enabled ? this.nameOf(text) : undefined;
    if (!name) return target.query({ text, values });
    return target.query({ text, values, name }).catch((error: { code?: string; message?: string }) => {
      if (!unusable(error)) throw error;
      // Calls sent named before the first failure came back fail the same way: each runs again
      // unnamed, and the first one alone says why.
      if (this.enabled) this.giveUp(error);
      return target.query({ text, values });
    });
  }

  private giveUp(error: { code?: string; message?: string }): void {
    this.enabled = false;
    this.logger.warn(
      `A prepared statement was not on its server connection (${error.code}: ${error.message}): ` +
        'statements run unprepared on this pool from now on (PgBouncer in transaction mode? PgBouncer 1.21+ ' +
        'with max_prepared_statements keeps them; HOLDFAST_PG_PREPARED=false turns them off from the start)',
    );
  }

  private nameOf(text: string): string | undefined {
    let name = this.names.get(text);
    if (name === undefined && this.names.size < MAX_NAMES) {
      name = `hf_${createHash('md5').update(text).digest('hex')}`;
      this.names.set(text, name);
    }
    return name;
  }
}
