import type { SqlDialect } from '../dialect/sql-dialect';
import type { SqlBinder } from '../dialect/timestamp-sql';

/**
 * One SQL statement ready to send: its text and the values of its placeholders, in order. The
 * one shape every Holdfast module builds its SQL in, and what `SqlClient` runs:
 * `sql.query(s)`, `sql.execute(s)`, `sql.querySync(s)`, `sql.executeSync(s)`.
 */
export interface Statement {
  readonly sql: string;
  readonly params: readonly unknown[];
}

/** A statement of fixed text: no parameters, or the ones given in placeholder order. */
export function statement(sql: string, params: readonly unknown[] = []): Statement {
  return { sql, params };
}

/**
 * The one binder: collects bound values while a statement's text is written and hands out their
 * placeholders in order (`$1`, `$2`… on PostgreSQL, `?` elsewhere).
 *
 * ```ts
 * const b = new StatementBinder(dialect);
 * return b.statement(`SELECT * FROM t WHERE id = ${b.bind(id)} AND kind IN (${b.list(kinds)})`);
 * ```
 */
export class StatementBinder implements SqlBinder {
  readonly params: unknown[] = [];

  constructor(private readonly dialect: Pick<SqlDialect, 'placeholder'>) {}

  /** The placeholder of `value`, bound next. */
  bind(value: unknown): string {
    this.params.push(value);
    return this.dialect.placeholder(this.params.length);
  }

  /** The placeholders of `values`, comma-separated (for `IN (…)` and `VALUES (…)`). */
  list(values: readonly unknown[]): string {
    return values.map((v) => this.bind(v)).join(', ');
  }

  /** `sql` with the values bound so far. */
  statement(sql: string): Statement {
    return { sql, params: this.params };
  }
}
