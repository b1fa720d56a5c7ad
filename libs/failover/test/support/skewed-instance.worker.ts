/**
 * One application instance for the clock-skew test: a @Failover method on the SQL store, driven
 * over IPC. The parent runs it under libfaketime (a real skew of the process clock) or, where
 * libfaketime is missing, with HOLDFAST_TEST_CLOCK_OFFSET_MS (Date shifted in this process).
 */
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { createTestDataSource, type TestDatabase } from '@holdfast/testing';
import { Failover } from '@holdfast/failover';
import { startFailoverApp } from './failover-app';

const offset = Number(process.env.HOLDFAST_TEST_CLOCK_OFFSET_MS ?? 0);
if (offset) {
  const RealDate = Date;
  class ShiftedDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(RealDate.now() + offset);
      else super(...(args as [number]));
    }
    static override now(): number {
      return RealDate.now() + offset;
    }
  }
  globalThis.Date = ShiftedDate as DateConstructor;
}

@Injectable()
class Quotes {
  up = true;

  @Failover({ name: 'skew', expiry: '3s' })
  async quote(key: string): Promise<{ key: string; pid: number }> {
    if (!this.up) throw new Error('upstream down');
    return { key, pid: process.pid };
  }
}

type Command = { id: number; cmd: 'call'; key: string; up: boolean } | { id: number; cmd: 'clock' };

async function main(): Promise<void> {
  const [db, prefix] = process.argv.slice(2) as [TestDatabase, string];
  const dataSource = await createTestDataSource(db);
  const app = await startFailoverApp({ dataSource, prefix }, { async: false }, { providers: [Quotes] });
  const quotes = app.get(Quotes);
  process.on('message', async (message: Command) => {
    if (message.cmd === 'clock') return process.send!({ id: message.id, now: Date.now() });
    quotes.up = message.up;
    try {
      const value = await quotes.quote(message.key);
      process.send!({ id: message.id, value });
    } catch (error) {
      process.send!({ id: message.id, error: (error as Error).message });
    }
  });
  process.on('disconnect', () => {
    void app
      .close()
      .then(() => dataSource.destroy())
      .finally(() => process.exit(0));
  });
  process.send!({ ready: true });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
