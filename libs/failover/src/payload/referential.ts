/**
 * A payload that knows whether it is fresh. Extend it (or declare `upToDate`, `asOf` or
 * `metadata` fields) and a recovered value carries `upToDate = false`, the `asOf` of the stored
 * entry, and the upstream error in `metadata.cause`.
 */
export class Referential {
  upToDate?: boolean = true;
  asOf?: Date;
  metadata?: Record<string, unknown>;
}

export function isReferentialLike(value: unknown): value is Referential {
  return (
    value instanceof Referential ||
    (typeof value === 'object' &&
      value !== null &&
      ('upToDate' in value || 'asOf' in value || 'metadata' in value))
  );
}

/** Marks a recovered value (or each element of a recovered array) as stale. */
export function markRecovered<T>(value: T, asOf: Date, cause: unknown): T {
  const mark = (v: unknown) => {
    if (!isReferentialLike(v)) return;
    v.upToDate = false;
    v.asOf = asOf;
    v.metadata = {
      ...(v.metadata ?? {}),
      cause,
      causeMessage: cause instanceof Error ? cause.message : String(cause),
    };
  };
  if (Array.isArray(value)) value.forEach(mark);
  else mark(value);
  return value;
}
