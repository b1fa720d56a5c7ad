/**
 * A payload that knows whether it is fresh. Extend it (or declare `upToDate`, `asOf` or
 * `metadata` fields) and a recovered value carries `upToDate = false`, the `asOf` of the stored
 * entry, and the upstream error in `metadata.cause` (not enumerable: JSON shows `causeType` and
 * `causeMessage`).
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
  if (Array.isArray(value)) for (const element of value) markStale(element, asOf, cause);
  else markStale(value, asOf, cause);
  return value;
}

function markStale(value: unknown, asOf: Date, cause: unknown): void {
  if (!isReferentialLike(value)) return;
  value.upToDate = false;
  value.asOf = asOf;
  const metadata: Record<string, unknown> = {
    ...(value.metadata ?? {}),
    causeType: cause instanceof Error ? cause.constructor.name || cause.name : typeof cause,
    causeMessage: cause instanceof Error ? cause.message : String(cause),
  };
  // The error itself stays reachable for code but out of JSON responses (it may carry internals).
  Object.defineProperty(metadata, 'cause', {
    value: cause,
    enumerable: false,
    writable: true,
    configurable: true,
  });
  value.metadata = metadata;
}
