import { withTimeout } from '@holdfast/core/kit';
import type { ResolvedFailoverOptions } from '../failover.options';

/** What a slice operation that passed `scatter.timeout` gives. */
export const TIMED_OUT: unique symbol = Symbol('timed-out');

/** Runs slice operations one by one or, with scatter.parallel, together, each bounded by scatter.timeout. */
export async function scatter<R>(
  options: ResolvedFailoverOptions['scatter'],
  operations: Array<() => Promise<R> | R>,
  onTimeout: (index: number) => void,
): Promise<Array<R | typeof TIMED_OUT>> {
  const { parallel, timeout } = options;
  const bounded = async (op: () => Promise<R> | R, index: number) => {
    const result = await withTimeout<R, typeof TIMED_OUT>(op, timeout, () => TIMED_OUT);
    if (result === TIMED_OUT) onTimeout(index);
    return result;
  };
  if (parallel) return Promise.all(operations.map(bounded));
  const results: Array<R | typeof TIMED_OUT> = [];
  for (let i = 0; i < operations.length; i++) results.push(await bounded(operations[i], i));
  return results;
}
