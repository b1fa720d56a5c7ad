// Boots the application and proves each module works from the installed packages; exits 0 when
// all four did their job, 1 otherwise (the reason on stderr).
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { MessageAcceptor } from '@holdfast/inbox';
import { LockerService } from '@holdfast/locker';
import { AppModule, CountryService, Events } from './app.module';

async function waitUntil(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function main(): Promise<void> {
  const app = await NestFactory.create(AppModule, { logger: ['error', 'warn'] });
  app.enableShutdownHooks();
  await app.listen(0, '127.0.0.1');
  const events = app.get(Events);

  // failover: a good answer is stored, then served marked stale while the upstream is down.
  const countries = app.get(CountryService);
  const fresh = await countries.findByCode('FR');
  if (fresh.upToDate === false) throw new Error('the first answer should be fresh');
  countries.upstreamDown = true;
  await waitUntil('the failover value', async () => {
    const stale = await countries.findByCode('FR').catch(() => undefined);
    return stale?.name === 'country FR' && stale.upToDate === false;
  });

  // simba: this only instance becomes the leader of 'package-test'.
  await waitUntil('simba leadership', () => events.leaderToken !== undefined);

  // locker: this only instance becomes master.
  await waitUntil('locker master', () => events.master && app.get(LockerService).isMaster);

  // inbox: an accepted message reaches its handler.
  await app.get(MessageAcceptor).accept({
    id: 'ping-1',
    type: { namespace: 'package-test', name: 'ping' },
    payload: { n: 1 },
    ttl: 'PT10M',
  });
  await waitUntil('inbox delivery', () => events.delivered.includes('ping-1:1'));

  // dashboard: its state shows the four modules; without a guard an action is refused.
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  const state = (await (await fetch(`${url}/holdfast/api/state`)).json()) as Record<string, unknown>;
  const missing = ['failover', 'simba', 'locker', 'inbox'].filter(
    (k) => !state[k] || 'error' in (state[k] as object),
  );
  if (missing.length)
    throw new Error(`dashboard state lacks ${missing.join(', ')}: ${JSON.stringify(state)}`);
  const refused = await fetch(`${url}/holdfast/api/inbox/retry`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-holdfast-request': '1' },
    body: JSON.stringify({ id: 'ping-1' }),
  });
  if (refused.status !== 403)
    throw new Error(`a read-only dashboard answered ${refused.status} to an action`);

  await app.close();
  console.log(
    `package app: failover, simba (token ${events.leaderToken}), locker, inbox and dashboard all worked`,
  );
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error('package app failed:', error);
    process.exit(1);
  },
);
