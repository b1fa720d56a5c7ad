import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { tempSqliteFile } from '@holdfast/testing';
import { eventually, startDemo, type DemoProcess } from './demo-process';

/**
 * The dashboard in a real browser: Debian's Chromium (HOLDFAST_CHROMIUM overrides the path)
 * driven by playwright-core, on two demo processes sharing one SQLite file. Every wait is on the
 * page's content (locators poll until it shows), none is a fixed sleep.
 */
const CHROMIUM = process.env.HOLDFAST_CHROMIUM ?? '/usr/bin/chromium';
// The README's screenshots: HOLDFAST_DASHBOARD_SCREENSHOTS=docs writes them into docs/ (a plain
// run keeps the work tree clean and writes them to a temporary directory).
const SHOTS =
  process.env.HOLDFAST_DASHBOARD_SCREENSHOTS === 'docs'
    ? resolve(__dirname, '../../../docs')
    : (process.env.HOLDFAST_DASHBOARD_SCREENSHOTS ?? join(tmpdir(), 'holdfast-dashboard-screenshots'));
const WAIT = 60_000;

describe('dashboard in Chromium, two demo instances on one SQLite file', () => {
  let a: DemoProcess;
  let b: DemoProcess;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    const file = tempSqliteFile('dashboard-browser');
    a = await startDemo(file);
    // a leads and is master before b starts, so the instance to kill is known.
    await eventually(
      async () => {
        const [simba, locker] = await Promise.all([a.get('/simba'), a.get('/locker')]);
        return simba.body.isOwner && locker.body.role === 'master' ? true : undefined;
      },
      WAIT,
      'the first instance to lead and be master',
    );
    b = await startDemo(file);
    // Chromium refuses to start as root without --no-sandbox.
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    mkdirSync(SHOTS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await Promise.all([a?.stop(), b?.stop()]);
  });

  const leaderRow = () => page.locator('#simba tr[data-mutex="demo-leader"]');

  it('shows leader, master and inbox; retries a parked message; follows the takeover after SIGKILL', async () => {
    const aSimba = (await a.get('/simba')).body;
    const aLocker = (await a.get('/locker')).body;
    await page.goto(b.base + '/');

    // b's page: a leads demo-leader, b is standby and a holds the lock, the inbox counts show.
    await leaderRow()
      .locator('[data-testid=owner]', { hasText: aSimba.instanceId })
      .waitFor({ timeout: WAIT });
    expect(await leaderRow().locator('[data-testid=owned-here]').count()).toBe(0);
    await page.locator('[data-testid=locker-role]', { hasText: 'standby' }).waitFor({ timeout: WAIT });
    await page
      .locator('[data-testid=locker-holder]', { hasText: aLocker.instanceId })
      .waitFor({ timeout: WAIT });
    await page
      .locator('#locker tr[data-lock="demo-master"]', { hasText: aLocker.instanceId })
      .waitFor({ timeout: WAIT });
    for (const status of ['due', 'retrying', 'paused', 'parked', 'expired', 'total']) {
      await page.locator(`#inbox [data-count="${status}"] .n`).waitFor({ timeout: WAIT });
    }

    // Failover: one good answer is stored; with the upstream cut, b serves it stale.
    expect((await b.get('/countries/FR')).status).toBe(200);
    const countryRow = page.locator('#failover tr[data-failover="country-by-code"]');
    await countryRow.locator('[data-testid=live-entries]', { hasText: /^1$/ }).waitFor({ timeout: WAIT });
    await b.post('/upstream/outage', { down: true });
    const stale = await b.get('/countries/FR');
    expect(stale.body).toMatchObject({ code: 'FR', upToDate: false });
    await countryRow.locator('[data-testid=stale-served]', { hasText: /^1$/ }).waitFor({ timeout: WAIT });
    await countryRow
      .locator('[data-testid=last-error]', { hasText: 'reference-data upstream is down' })
      .waitFor({ timeout: WAIT });
    await b.post('/upstream/outage', { down: false });

    // A note that fails its first 3 attempts (the demo's maxRetries) is parked with its error.
    const accepted = await b.post('/inbox', { failAttempts: 3 });
    expect(accepted.status).toBe(202);
    const id: string = accepted.body.id;
    const parkedRow = page.locator(`[data-testid=parked] tr[data-message-id="${id}"]`);
    await parkedRow.waitFor({ timeout: WAIT });
    await parkedRow.locator('td.error', { hasText: 'fails attempt 3 of the 3' }).waitFor({ timeout: WAIT });
    await page.locator('#inbox [data-count="parked"] .n', { hasText: /^1$/ }).waitFor({ timeout: WAIT });

    // Found by id, whatever its status; the health section, the demo's @ScheduledLock job, and a
    // lease that is running shown calmly (renewals on time), not as a countdown.
    await page.locator('#inbox [data-testid=find-id]').fill(id);
    await page.locator('#inbox button', { hasText: 'find' }).click();
    await page.locator('#inbox [data-testid=found]', { hasText: 'parked' }).waitFor({ timeout: WAIT });
    // Listed by type (its name alone) among the parked messages, and the header names b's instance id.
    await page.locator('#inbox [data-testid=find-type]').fill('note');
    await page.locator('#inbox [data-testid=find-type-status]').selectOption('parked');
    await page.locator('#inbox [data-testid=list-type]').click();
    await page
      .locator(`#inbox [data-testid=by-type-list] tr[data-message-id="${id}"]`)
      .waitFor({ timeout: WAIT });
    await page
      .locator('#inbox [data-testid=by-type-summary]', { hasText: 'of type note' })
      .waitFor({ timeout: WAIT });
    await page
      .locator('#instance', { hasText: (await b.get('/instance')).body.instanceId })
      .waitFor({ timeout: WAIT });
    for (const lib of ['failover', 'inbox', 'locker', 'simba']) {
      await page.locator(`[data-health="${lib}"] .badge`, { hasText: 'up' }).waitFor({ timeout: WAIT });
    }
    await page.locator('#scheduled tr[data-job="demo-report"]').waitFor({ timeout: WAIT });
    await parkedRow.locator('button[data-action=payload]').click();
    await page
      .locator('[data-testid=payload]', { hasText: `payload of ${id} (json)` })
      .waitFor({ timeout: WAIT });
    await leaderRow()
      .locator('[data-testid=expiry]', { hasText: 'renewed on time' })
      .waitFor({ timeout: WAIT });
    // A type paused across the cluster (one the demo never sends), shown on the picture, then resumed.
    const pauseType = (action: string, body: Record<string, string>) =>
      b.post(`/api/inbox/types/${action}`, body, { 'x-holdfast-request': '1' });
    expect((await pauseType('pause', { type: 'demo:invoice', reason: 'ledger migration' })).status).toBe(200);
    await page
      .locator('#inbox [data-testid=paused-types-badge]', { hasText: '1 type paused' })
      .waitFor({ timeout: WAIT });
    await page.locator('#inbox tr[data-paused-type="demo:invoice"]').waitFor({ timeout: WAIT });
    await page.screenshot({ path: resolve(SHOTS, 'dashboard.png'), fullPage: true });
    expect((await pauseType('resume', { type: 'demo:invoice' })).status).toBe(200);

    // retry: due again, the leader delivers it (its 4th attempt succeeds), the row goes away.
    await parkedRow.locator('button[data-action=retry]').click();
    await parkedRow.waitFor({ state: 'detached', timeout: WAIT });
    await page.locator('#inbox [data-count="parked"] .n', { hasText: /^0$/ }).waitFor({ timeout: WAIT });
    await page.locator('#inbox [data-count="total"] .n', { hasText: /^0$/ }).waitFor({ timeout: WAIT });
    const delivered = await eventually(
      async () => {
        const recent: Array<{ id: string; retries: number }> = (await a.get('/inbox')).body.handler.recent;
        return recent.find((m) => m.id === id);
      },
      WAIT,
      'the retried note in the leader handler',
    );
    // Retry gave it one more attempt: RETRIES maxRetries - 1, as camunda-bpm-correlate retries.
    expect(delivered.retries).toBe(2);

    // SIGKILL the leader: b's page shows b as the owner of demo-leader, and as master.
    a.child.kill('SIGKILL');
    await leaderRow().locator('[data-testid=owned-here]').waitFor({ timeout: WAIT });
    const bSimba = (await b.get('/simba')).body;
    await leaderRow()
      .locator('[data-testid=owner]', { hasText: bSimba.instanceId })
      .waitFor({ timeout: WAIT });
    const token = Number(await leaderRow().locator('[data-testid=fencing-token]').textContent());
    expect(token).toBeGreaterThan(aSimba.fencingToken);
    await page.locator('[data-testid=locker-role]', { hasText: 'master' }).waitFor({ timeout: WAIT });
    const bLocker = (await b.get('/locker')).body;
    await page
      .locator('#locker tr[data-lock="demo-master"]', { hasText: bLocker.instanceId })
      .waitFor({ timeout: WAIT });
    // The inbox's own leader mutex (not one of simba's @OnMutexAcquired contenders), and the lock
    // row: "this instance" too.
    await page
      .locator('#simba tr[data-mutex="holdfast-inbox"] [data-testid=owned-here]')
      .waitFor({ timeout: WAIT });
    await page
      .locator('#locker tr[data-lock="demo-master"] [data-testid=lock-here]')
      .waitFor({ timeout: WAIT });
    await page.screenshot({ path: resolve(SHOTS, 'dashboard-takeover.png'), fullPage: true });
  }, 240_000);
});
