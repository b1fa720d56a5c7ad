import type { StatementBinder } from '@holdfast/core/kit';

/** A paused type: its name, and its namespace and revision when the pause names them (undefined: any). */
export interface PausedTypeFilter {
  name: string;
  namespace?: string | null;
  revision?: string | null;
}

/**
 * `(…)`: the row (columns of `alias`, or unqualified) is of one of the `paused` types, or '' when
 * none is paused. Null-safe: a NULL revision or namespace is '' here, never an unknown that would
 * drop the row. The claims leave such rows where they are (CorMessageClaimTerms.due), and a grouped
 * claim treats an earlier group member of a paused type as one that holds its group
 * (CorMessageGroups.groupReady).
 */
export function pausedTypeMatch(
  b: StatementBinder,
  paused: readonly PausedTypeFilter[],
  alias?: string,
): string {
  if (!paused.length) return '';
  const column = (name: string) => (alias ? `${alias}.${name}` : name);
  const one = (type: PausedTypeFilter) => {
    const terms = [`${column('PAYLOAD_TYPE_NAME')} = ${b.bind(type.name)}`];
    if (type.namespace !== undefined)
      terms.push(`COALESCE(${column('PAYLOAD_TYPE_NAMESPACE')}, '') = ${b.bind(type.namespace ?? '')}`);
    if (type.revision !== undefined)
      terms.push(`COALESCE(${column('PAYLOAD_TYPE_REVISION')}, '') = ${b.bind(type.revision ?? '')}`);
    return `(${terms.join(' AND ')})`;
  };
  return `(${paused.map(one).join(' OR ')})`;
}
