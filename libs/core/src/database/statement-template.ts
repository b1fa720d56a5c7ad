import type { SqlDialect } from '../dialect/sql-dialect';
import type { SqlBinder } from '../dialect/timestamp-sql';
import type { Statement } from './statement';

/** The names of a template's values: the string keys of `V`. */
export type SlotName<V> = keyof V & string;

/**
 * A statement for a hot path: its text written once, by a {@link TemplateBinder}, with named
 * slots where each call's values go; each call binds its values by name (`bind({ name, key })`)
 * and gets a {@link Statement} with that same text. A call costs the params array and nothing
 * more: no text is written again, no binder is made. Whoever writes the text (a replaceable query
 * resolver) puts the slots where and in the order its SQL needs them, and the caller never
 * learns that order.
 *
 * ```ts
 * const b = new TemplateBinder<{ name: string; key: string }>(dialect);
 * const find = b.template(`SELECT … FROM T WHERE NAME = ${b.slot('name')} AND KEY = ${b.slot('key')}`);
 * // per call:
 * const rows = await sql.query(find.bind({ name, key }));
 * ```
 */
export class StatementTemplate<V extends object> {
  private readonly read: (values: V) => unknown[];

  /**
   * @param sql the text, with one placeholder per entry of `slots`, in order
   * @param slots for each placeholder: the name of the call's value it takes, or undefined where
   *   it takes the constant at the same index of `constants`
   * @param constants for each placeholder: the value bound when the template was written (only
   *   read where `slots` has no name)
   */
  constructor(
    readonly sql: string,
    private readonly slots: ReadonlyArray<SlotName<V> | undefined>,
    private readonly constants: readonly unknown[],
  ) {
    this.read = paramsReader(slots, constants);
  }

  /** The values of the placeholders for one call, in placeholder order: a new array each call. */
  params(values: V): unknown[] {
    return this.read(values);
  }

  /** The statement for one call: this template's text and `values` in placeholder order. */
  bind(values: V): Statement {
    return { sql: this.sql, params: this.read(values) };
  }

  /**
   * The same slots in a text made from this one (`rewrite(this.sql)`), such as the statement
   * wrapped in a subquery or bounded by a statement timeout. `rewrite` must keep
   * the placeholders as they are and add none.
   */
  withText(rewrite: (sql: string) => string): StatementTemplate<V> {
    return new StatementTemplate<V>(rewrite(this.sql), this.slots, this.constants);
  }
}

/**
 * The function that lists one call's values in placeholder order. Compiled once per template to
 * the array literal a hand would write (`(v) => [v["name"], v["key"]]`): a loop over the slot
 * names does a keyed read per value, which V8 cannot specialize, and costs 2 to 5 times what
 * writing the array by hand does (`npm run bench -- statement-template`). The names go in as
 * JSON string literals and the constants by index, so no value of either becomes code. Where the
 * runtime refuses code from strings (`--disallow-code-generation-from-strings`), the loop.
 */
function paramsReader<V extends object>(
  slots: ReadonlyArray<SlotName<V> | undefined>,
  constants: readonly unknown[],
): (values: V) => unknown[] {
  const items = slots.map((slot, i) => (slot === undefined ? `c[${i}]` : `v[${JSON.stringify(slot)}]`));
  try {
    return new Function('c', `return (v) => [${items.join(', ')}];`)(constants) as (values: V) => unknown[];
  } catch {
    return (values) => {
      const params: unknown[] = [];
      for (let i = 0; i < slots.length; i++) {
        const slot = slots[i];
        params.push(slot === undefined ? constants[i] : values[slot]);
      }
      return params;
    };
  }
}

/**
 * Writes a {@link StatementTemplate}: hands out the placeholder of a named slot (`slot(name)`,
 * filled by each call's value of that name) or of a constant (`bind(value)`, the same for every
 * call), in order, as {@link StatementBinder} does for one statement. It is a `SqlBinder`, so the
 * dialect's pieces that bind constants (`timestampSql().at(b, ms)`) write
 * into a template as into a statement.
 *
 * A slot used twice gets two placeholders, each bound to the same value: right on every dialect,
 * whether its placeholders are numbered (`$n`) or positional (`?`).
 */
export class TemplateBinder<V extends object> implements SqlBinder {
  private readonly slots: Array<SlotName<V> | undefined> = [];
  private readonly constants: unknown[] = [];

  constructor(private readonly dialect: Pick<SqlDialect, 'placeholder'>) {}

  /** The placeholder of each call's value named `name`. */
  slot(name: SlotName<V>): string {
    this.slots.push(name);
    this.constants.push(undefined);
    return this.dialect.placeholder(this.slots.length);
  }

  /** The placeholder of `value`, bound to every call alike. */
  bind(value: unknown): string {
    this.slots.push(undefined);
    this.constants.push(value);
    return this.dialect.placeholder(this.slots.length);
  }

  /** The placeholders of constant `values`, comma-separated (for `IN (…)` and `VALUES (…)`). */
  list(values: readonly unknown[]): string {
    return values.map((v) => this.bind(v)).join(', ');
  }

  /** `sql`, with the slots and constants handed out so far. */
  template(sql: string): StatementTemplate<V> {
    return new StatementTemplate<V>(sql, [...this.slots], [...this.constants]);
  }
}
