import type { Logger } from '@nestjs/common';

const SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

/**
 * Waits for `waiting` while listening for SIGTERM, SIGINT and SIGHUP: Nest's shutdown hooks wait
 * for bootstrap to finish first, so a signal during a blocking bootstrap runs `stop` (which
 * should settle `waiting`). When nothing else handles the signal, it is raised again afterwards
 * so the default (exit) still happens. The listeners are removed either way.
 */
export async function whileListeningForShutdown(
  waiting: Promise<void>,
  stop: () => Promise<void>,
  logger: Logger,
  what: string,
): Promise<void> {
  const onSignal = (signal: NodeJS.Signals) => {
    SIGNALS.forEach((s) => process.removeListener(s, onSignal));
    logger.log(`${signal} while waiting for ${what}: no longer waiting`);
    void stop().then(() => {
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
  };
  SIGNALS.forEach((s) => process.once(s, onSignal));
  try {
    await waiting;
  } finally {
    SIGNALS.forEach((s) => process.removeListener(s, onSignal));
  }
}
