import { chromium, type Browser, type Page } from 'playwright-core';
import { tempSqliteFile } from '@holdfast/testing';
import { eventually, startDemo, type DemoProcess } from './demo-process';

/**
 * Pausing and resuming a message type from the page, in Debian's Chromium (HOLDFAST_CHROMIUM
 * overrides the path) driven by playwright-core, on one demo process. Every wait is on the page's
 * content or the demo's own counts.
 */
const CHROMIUM = process.env.HOLDFAST_CHROMIUM ?? '/usr/bin/chromium';
const WAIT = 60_000;

/** For a failed wait: what the page told the operator, what its boxes hold, the demo's last lines. */
async function whatThePageSays(page: Page, demo: DemoProcess): Promise<string> {
  const text = async (selector: string) =>
    page
      .locator(selector)
      .first()
      .evaluate((el) => {
        const box = el as unknown as { tagName: string; value: string; textContent: string | null };
        return box.tagName === 'INPUT' ? `value ${JSON.stringify(box.value)}` : box.textContent;
      })
      .catch((e: Error) => `(unread: ${e.message.split('\n')[0]})`);
  return [
    `notice: ${await text('#notice')}`,
    `banner: ${await text('#banner')}`,
    `refreshed: ${await text('#refreshed')}`,
    `pause box: ${await text('#inbox [data-testid=pause-type]')}`,
    `paused types: ${await text('#inbox [data-testid=paused-types]')}`,
    `the demo's last lines:\n${demo.output().split('\n').slice(-30).join('\n')}`,
  ].join('\n');
}

describe('the dashboard in Chromium: pausing a message type', () => {
  let demo: DemoProcess;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    demo = await startDemo(tempSqliteFile('dashboard-pause-type'));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(demo.base + '/');
    await page
      .locator('#inbox [data-testid=paused-types]', { hasText: 'No message type is paused.' })
      .waitFor({ timeout: WAIT });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await demo?.stop();
  });

  it('pauses a type (badge, who, why), holds its new messages, and resume delivers them', async () => {
    await page.locator('#inbox [data-testid=pause-type]').fill('demo:note');
    await page.locator('#inbox [data-testid=pause-type-reason]').fill('downstream maintenance');
    await page.locator('#inbox [data-testid=pause-type-button]').click();
    const row = page.locator('#inbox tr[data-paused-type="demo:note"]');
    await row.waitFor({ timeout: WAIT }).catch(async (e: Error) => {
      throw new Error(`${e.message}\n${await whatThePageSays(page, demo)}`);
    });
    expect(await row.locator('td').allTextContents()).toEqual([
      'demo:note',
      // The demo's dashboard has no guard of its own users: the audit names the actor so.
      'an unnamed user (the guard set no request.user)',
      expect.any(String),
      'downstream maintenance',
      'resume type',
    ]);
    expect(await page.locator('#inbox [data-testid=paused-types-badge]').textContent()).toBe('1 type paused');
    expect(await page.locator('#notice').textContent()).toBe('pause type demo:note: done');

    // Notes accepted now wait: still due after the delivery loop has polled several times.
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await demo.post('/inbox', { paused: i })).body.id);
    await page.locator('#inbox [data-count="due"] .n', { hasText: /^3$/ }).waitFor({ timeout: WAIT });
    const delivered = async () =>
      ((await demo.get('/inbox')).body as { handler: { delivered: number } }).handler.delivered;
    const before = await delivered();
    await new Promise((r) => setTimeout(r, 2_000)); // four of the demo's polls (500 ms)
    expect(await delivered()).toBe(before);
    expect((await demo.get('/inbox')).body.counts.due).toBe(3);

    await row.locator('button[data-type-action=resume]').click();
    await row.waitFor({ state: 'detached', timeout: WAIT });
    await page
      .locator('#inbox [data-testid=paused-types]', { hasText: 'No message type is paused.' })
      .waitFor({ timeout: WAIT });
    expect(await page.locator('#inbox [data-testid=paused-types-badge]').count()).toBe(0);
    await eventually(
      async () => ((await demo.get('/inbox')).body.counts.total === 0 ? true : undefined),
      WAIT,
      'the paused notes delivered after resume',
    );
    expect(await delivered()).toBe(before + 3);
  }, 120_000);
});
