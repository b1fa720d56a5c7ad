// An application that installs only @holdfast/core, @holdfast/inbox and @holdfast/dashboard (no
// simba, failover, locker or CLI, and no @nestjs/schedule): the dashboard must load, show the
// inbox alone and act on it. Exits 0 when it did, 1 otherwise (the reason on stderr).
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { HoldfastDashboardModule } from '@holdfast/dashboard';
import { InboxModule, MessageAcceptor, MessageManagement } from '@holdfast/inbox';

const ABSENT = [
  '@holdfast/simba',
  '@holdfast/failover',
  '@holdfast/locker',
  '@holdfast/cli',
  '@nestjs/schedule',
];

@Module({
  imports: [
    TypeOrmModule.forRoot({ type: 'better-sqlite3', database: ':memory:' }),
    InboxModule.forRoot({ schema: 'create', deliver: false, retry: { maxRetries: 1 } }),
    HoldfastDashboardModule.forRoot({ guard: { canActivate: () => true } }),
  ],
})
class PartialModule {}

async function main(): Promise<void> {
  const installed = ABSENT.filter((name) => {
    try {
      require.resolve(name);
      return true;
    } catch {
      return false;
    }
  });
  if (installed.length)
    throw new Error(`installed though the app does not ask for it: ${installed.join(', ')}`);

  const app = await NestFactory.create(PartialModule, { logger: ['error', 'warn'] });
  await app.listen(0, '127.0.0.1');
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  const management = app.get(MessageManagement);
  await app.get(MessageAcceptor).accept({ id: 'p-1', type: { name: 'ping' }, payload: {} });
  await management.setRetries('p-1', 1);

  const state = (await (await fetch(`${url}/holdfast/api/state`)).json()) as Record<string, unknown>;
  const sections = ['failover', 'simba', 'locker', 'inbox'].filter((k) => k in state);
  if (sections.join() !== 'inbox') throw new Error(`dashboard sections: ${sections.join(', ')} (want inbox)`);
  const counts = (state.inbox as { counts?: { parked?: number } }).counts;
  if (counts?.parked !== 1) throw new Error(`dashboard inbox: ${JSON.stringify(state.inbox)}`);

  const retry = await fetch(`${url}/holdfast/api/inbox/retry`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-holdfast-request': '1' },
    body: JSON.stringify({ id: 'p-1' }),
  });
  if (retry.status !== 200) throw new Error(`retry answered ${retry.status}: ${await retry.text()}`);
  const status = (await management.get('p-1'))?.status;
  if (status !== 'due') throw new Error(`after retry p-1 is ${status}`);

  await app.close();
  console.log(
    'partial app: the dashboard showed and retried the inbox, with no other Holdfast module installed',
  );
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error('partial app failed:', error);
    process.exit(1);
  },
);
