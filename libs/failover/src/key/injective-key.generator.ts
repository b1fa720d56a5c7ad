import { TaggedKeyGenerator } from './tagged-key.generator';

const SEPARATORS = /[\\:,]/g;
const NEEDS_ESCAPE = /[\\:,]/;
/** A string that would otherwise read as the start of an ISO date (`2026-01-02T03` + `:`...). */
const DATE_PREFIX = /^\d{4}-\d\d-\d\dT\d\d$/;

/**
 * A layer 1 that never gives two distinct argument lists one key, except between values of
 * different types printed alike (`42` and `'42'`, `true` and `'true'`, `null`, `undefined` and
 * `'null'`, a value object and its `toString()` text, a one-element list and its element, `[]`
 * and `''`, no argument and `'NO-ARG'`): for services that do not share FAILOVER_STORE with the
 * Java library. Select it per failover (`keyGenerator: InjectiveKeyGenerator`) or for the module
 * (`FailoverModule.forRoot({ keys: 'injective' })`).
 *
 * Same as DefaultKeyGenerator, except: `\`, `:` and `,` inside a string (or `toString()` text)
 * become `\\`, `\:`, `\,`, and a string starting with `{` or `[`, or reading like the start of
 * an ISO date, gets a leading `\`; `null`/`undefined` is `null`; a list inside a list is its
 * canonical JSON. So `('a:b')` and `('a', 'b')` get different keys. An `undefined` object field
 * is a missing one.
 */
export class InjectiveKeyGenerator extends TaggedKeyGenerator {
  protected readonly absent = 'null';

  protected text(value: string): string {
    let text = NEEDS_ESCAPE.test(value) ? value.replace(SEPARATORS, '\\$&') : value;
    const first = text.charCodeAt(0);
    if (first === 0x7b /* { */ || first === 0x5b /* [ */ || DATE_PREFIX.test(text)) text = `\\${text}`;
    return text;
  }

  protected nestedList(list: readonly unknown[], path: string): string {
    return this.json(list, path);
  }
}
