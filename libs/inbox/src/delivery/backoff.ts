import { ExponentialBackoff, type GeneratorFn, type IBackoff } from 'cockatiel';

/** Retry policy in milliseconds (already parsed from the options). */
export interface BackoffPolicy {
  maxRetries: number;
  initialDelay: number;
  multiplier: number;
  maxDelay: number;
  jitter: number;
}

/**
 * initialDelay × exponent^attempt, capped at maxDelay: the inbox's documented schedule. cockatiel's
 * own generators either double whatever the exponent (noJitterGenerator) or decorrelate the
 * delays (the default), and the inbox's `multiplier` and `jitter` options promise this one.
 */
const scheduleGenerator: GeneratorFn<number> = (attempt = 0, options) => [
  Math.min(options.maxDelay, options.initialDelay * options.exponent ** attempt),
  attempt + 1,
];

/**
 * The delay before the next attempt after a failure, or undefined when the message is to be
 * parked: its failed attempts reach `maxRetries` (camunda-bpm-correlate's rule, RETRIES >=
 * maxRetries; the first attempt always happens). Delay = min(initialDelay × multiplier^retriesBefore,
 * maxDelay), through cockatiel's ExponentialBackoff, less a random share of up to `jitter` of it
 * so failures spread out.
 */
export function nextRetryDelay(
  policy: BackoffPolicy,
  retriesBefore: number,
  random: () => number = Math.random,
): number | undefined {
  if (retriesBefore + 1 >= Math.max(1, policy.maxRetries)) return undefined;
  // The retry count lives in the row, not in a running backoff: walk to the `retriesBefore`th step.
  let step: IBackoff<void> = new ExponentialBackoff<number>({
    generator: scheduleGenerator,
    initialDelay: policy.initialDelay,
    maxDelay: policy.maxDelay,
    exponent: policy.multiplier,
  }).next();
  for (let i = 0; i < retriesBefore; i++) step = step.next(undefined);
  return Math.round(step.duration * (1 - policy.jitter * random()));
}
