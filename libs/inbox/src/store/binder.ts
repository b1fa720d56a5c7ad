import type { SqlDialect } from '@holdfast/core/kit';

/** Collects bound values and hands out their placeholders in order ($1, $2… or ?). */
export class Binder {
  readonly params: unknown[] = [];

  constructor(private readonly dialect: SqlDialect) {}

  bind(value: unknown): string {
    this.params.push(value);
    return this.dialect.placeholder(this.params.length);
  }

  list(values: readonly unknown[]): string {
    return values.map((v) => this.bind(v)).join(', ');
  }
}
