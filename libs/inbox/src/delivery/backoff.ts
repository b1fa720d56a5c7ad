/** Retry policy in milliseconds (already parsed from the options). */
export interface BackoffPolicy {
  maxRetries: number;
  initialDelay: number;
  multiplier: number;
  maxDelay: number;
  jitter: number;
}

/**
 * The delay before the next attempt after a failure, or undefined when the message is to be
 * parked: its failed attempts reach `maxRetries` (camunda-bpm-correlate's rule, RETRIES >=
 * maxRetries; the first attempt always happens). Delay = min(initialDelay × multiplier^retriesBefore,
 * maxDelay), less a random share of up to `jitter` of it so failures spread out.
 */
export function nextRetryDelay(
  policy: BackoffPolicy,
  retriesBefore: number,
  random: () => number = Math.random,
): number | undefined {
  if (retriesBefore + 1 >= Math.max(1, policy.maxRetries)) return undefined;
  const base = Math.min(policy.initialDelay * Math.pow(policy.multiplier, retriesBefore), policy.maxDelay);
  return Math.round(base * (1 - policy.jitter * random()));
}
