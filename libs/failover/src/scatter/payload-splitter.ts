/** One slice of a payload and the arguments a single-entity call would have had. */
export interface PayloadSlice<S = unknown> {
  args: unknown[];
  payload: S;
}

/**
 * Scatter/gather: stores a composite payload (a list) as one entry per slice, and rebuilds it
 * from whichever slices are stored. Each slice's key is made from its `args`, exactly as a
 * single-entity method's call would be, so with a shared `domain` the list method and the
 * single method recover each other's entries.
 */
export interface PayloadSplitter<P = unknown, S = unknown> {
  /**
   * The slices to store. A `null` slice (or one whose payload is null) is an item the upstream
   * did not return: it is not stored, only counted, and the other slices are.
   */
  splitOnStore(args: readonly unknown[], payload: P): Array<PayloadSlice<S> | null>;
  /** The slice arguments to look up for a call. */
  splitOnRecover(args: readonly unknown[]): unknown[][];
  /** Builds the result; a missing slice is `null` in its position (decide here what to do with it). */
  merge(args: readonly unknown[], slices: Array<S | null>): P;
}

/**
 * The common case: a method taking a list of ids (first argument) and returning the entities.
 * Each entity is stored under `[id]`; recovery returns them in request order, `null` for a
 * missing one. Implement `idOf`.
 */
export abstract class ListPayloadSplitter<T> implements PayloadSplitter<T[], T> {
  protected abstract idOf(item: T): string | number;

  /** A `null` item (not found upstream) gives a `null` slice: not stored, counted. */
  splitOnStore(_args: readonly unknown[], payload: T[]): Array<PayloadSlice<T> | null> {
    return (payload ?? []).map((item) =>
      item === null || item === undefined ? null : { args: [this.idOf(item)], payload: item },
    );
  }

  splitOnRecover(args: readonly unknown[]): unknown[][] {
    const ids = args[0];
    return (Array.isArray(ids) ? ids : ids === undefined ? [] : [ids]).map((id) => [id]);
  }

  merge(_args: readonly unknown[], slices: Array<T | null>): T[] {
    return slices as T[];
  }
}
