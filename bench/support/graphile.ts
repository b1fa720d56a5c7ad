import { Logger as GraphileLogger, run, type Runner, type Task } from 'graphile-worker';

/**
 * graphile-worker in its documented high-throughput setup, as every bench runs it: 10 jobs at once
 * per process, a local queue of 500, completions and failures batched without delay, a pool of 12,
 * LISTEN/NOTIFY and prepared statements on (its defaults).
 */
export const GRAPHILE_SETTINGS = {
  concurrentJobs: 10,
  maxPoolSize: 12,
  localQueue: { size: 500 },
  completeJobBatchDelay: 0,
  failJobBatchDelay: 0,
};

/** graphile-worker's logger with only its errors and warnings. */
const quiet = new GraphileLogger(() => (level, message) => {
  if (level === 'error' || level === 'warning') console.error(`graphile-worker ${level}: ${message}`);
});

/** Starts a runner of `task` on `schema` with GRAPHILE_SETTINGS. */
export function runGraphile(
  connectionString: string,
  schema: string,
  task: string,
  handle: Task,
): Promise<Runner> {
  const s = GRAPHILE_SETTINGS;
  return run({
    connectionString,
    schema,
    concurrency: s.concurrentJobs,
    maxPoolSize: s.maxPoolSize,
    noHandleSignals: true,
    taskList: { [task]: handle },
    preset: {
      worker: {
        localQueue: s.localQueue,
        completeJobBatchDelay: s.completeJobBatchDelay,
        failJobBatchDelay: s.failJobBatchDelay,
      },
    },
    logger: quiet,
  });
}
