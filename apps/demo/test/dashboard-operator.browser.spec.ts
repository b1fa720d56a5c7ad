import { chromium, type Browser, type Page } from 'playwright-core';
import { tempSqliteFile } from '@holdfast/testing';
import { eventually, startDemo, type DemoProcess } from './demo-process';

/**
 * What an on-call engineer does on the page, in Debian's Chromium (HOLDFAST_CHROMIUM overrides
 * the path) driven by playwright-core, on one demo process: copy a message id while the page
 * polls, and act on the messages listed by type. Every wait is on the page's content.
 */
const CHROMIUM = process.env.HOLDFAST_CHROMIUM ?? '/usr/bin/chromium';
const WAIT = 60_000;
/** The page's text selection (the browser's own, as the operator's copy would take it). */
const SELECTED = () => (globalThis as unknown as Browserish).getSelection().toString();
/** The little of the browser's DOM these tests touch (the project compiles without the DOM types). */
interface Browserish {
  document: { createRange(): { selectNodeContents(node: unknown): void } };
  getSelection(): { removeAllRanges(): void; addRange(range: unknown): void; toString(): string };
}

describe('the dashboard in Chromium, as an operator uses it', () => {
  let demo: DemoProcess;
  let browser: Browser;
  let page: Page;
  const parked: string[] = [];

  beforeAll(async () => {
    demo = await startDemo(tempSqliteFile('dashboard-operator'));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    page.on('dialog', (dialog) => void dialog.accept());
    // Each fails its first 3 attempts, the demo's maxRetries: parked, in the order accepted.
    for (let i = 0; i < 4; i++) parked.push((await demo.post('/inbox', { failAttempts: 3 })).body.id);
    await page.goto(demo.base + '/');
    await page.locator('#inbox [data-count="parked"] .n', { hasText: /^4$/ }).waitFor({ timeout: WAIT });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await demo?.stop();
  });

  /** Resolves after the page has rendered `renders` more polls (its "read at" line changes each time). */
  async function polls(renders: number): Promise<void> {
    for (let i = 0; i < renders; i++) {
      const before = await page.locator('#refreshed').textContent();
      await page.waitForFunction(
        "(text) => document.getElementById('refreshed').textContent !== text",
        before,
        {
          timeout: WAIT,
          polling: 100,
        },
      );
    }
  }

  it('keeps a selected message id selected while the page polls and the list around it changes', async () => {
    const [first, second] = parked;
    const row = (id: string) => page.locator(`#inbox [data-testid=parked] tr[data-message-id="${id}"]`);
    await row(second).waitFor({ timeout: WAIT });
    // The operator selects the second id to copy it.
    await row(second)
      .locator('code')
      .evaluate((code) => {
        const { document, getSelection } = globalThis as unknown as Browserish;
        const range = document.createRange();
        range.selectNodeContents(code);
        getSelection().removeAllRanges();
        getSelection().addRange(range);
      });
    expect(await page.evaluate(SELECTED)).toBe(second);
    // Meanwhile the first row goes (another operator deletes it) and the page polls on.
    expect((await demo.post('/api/inbox/delete', { id: first }, { 'x-holdfast-request': '1' })).status).toBe(
      200,
    );
    await row(first).waitFor({ state: 'detached', timeout: WAIT });
    await polls(2);
    // Every poll re-rendered the page, and the selection went with it.
    expect(await page.evaluate(SELECTED)).toBe(second);
    await page.evaluate(() => (globalThis as unknown as Browserish).getSelection().removeAllRanges());
  }, 120_000);

  it('lists by type as printed (namespace:name), and a row acted on leaves the list and its total at once', async () => {
    // What the first test left parked (it deleted the first), in the order listed.
    const left = parked.slice(1);
    const type = await page.locator('#inbox [data-testid=parked] tr td:nth-child(2)').first().textContent();
    // One spelling of a type: the one the holdfast command prints and takes.
    expect(type).toBe('demo:note');
    await page.locator('#inbox [data-testid=find-type]').fill(type!);
    await page.locator('#inbox [data-testid=find-type-status]').selectOption('parked');
    await page.locator('#inbox [data-testid=list-type]').click();
    const summary = page.locator('#inbox [data-testid=by-type-summary]');
    await summary.filter({ hasText: `messages 1–3 of 3 parked of type ${type}` }).waitFor({ timeout: WAIT });
    const listed = (id: string) =>
      page.locator(`#inbox [data-testid=by-type-list] tr[data-message-id="${id}"]`);

    // Deleted from the list by type: gone from it, and the total follows, without a reload.
    await listed(left[0]).locator('button[data-action=delete]').click();
    await listed(left[0]).waitFor({ state: 'detached', timeout: WAIT });
    await summary.filter({ hasText: `messages 1–2 of 2 parked of type ${type}` }).waitFor({ timeout: WAIT });
    // Retried from the parked list above: it leaves the listing of parked messages too.
    await page
      .locator(`#inbox [data-testid=parked] tr[data-message-id="${left[1]}"] button[data-action=retry]`)
      .click();
    await listed(left[1]).waitFor({ state: 'detached', timeout: WAIT });
    await summary.filter({ hasText: `messages 1–1 of 1 parked of type ${type}` }).waitFor({ timeout: WAIT });
    // And the list stays live: a note parked now appears in it by itself.
    const late: string = (await demo.post('/inbox', { failAttempts: 3 })).body.id;
    await listed(late).waitFor({ timeout: WAIT });
    await summary.filter({ hasText: `messages 1–2 of 2 parked of type ${type}` }).waitFor({ timeout: WAIT });
    expect(await page.locator('#banner').isVisible()).toBe(false);
    await eventually(
      async () => ((await demo.get('/inbox')).body.counts.parked === 2 ? true : undefined),
      WAIT,
      'two parked',
    );
  }, 120_000);

  it('keeps its search panel through a failed section, gives up an unanswered read, and never shows a read older than an action', async () => {
    const pauseBox = page.locator('#inbox [data-testid=pause-type]');
    await pauseBox.fill('half typed');
    // Two polls' inbox section is an error: the section shows it, then comes back with the
    // search panel as the operator left it, not an empty one.
    await page.route(
      '**/api/state',
      async (route) => {
        const response = await route.fetch();
        await route.fulfill({
          response,
          json: { ...(await response.json()), inbox: { error: 'simulated' } },
        });
      },
      { times: 2 },
    );
    await page.locator('#inbox p.error', { hasText: 'simulated' }).waitFor({ timeout: WAIT });
    await pauseBox.waitFor({ timeout: WAIT });
    expect(await pauseBox.inputValue()).toBe('half typed');
    await pauseBox.fill('');

    // A read the network leaves unanswered is given up (the page's bound: three polls, at least
    // 10 s) with a banner, and the polls go on once reads are answered again.
    let unanswered = 0;
    await page.route('**/api/state', () => void unanswered++);
    const banner = page.locator('#banner', {
      hasText: 'Cannot read the state of this instance: state: no answer within 10 s',
    });
    await banner.waitFor({ timeout: WAIT });
    await page.unroute('**/api/state');
    await banner.waitFor({ state: 'hidden', timeout: WAIT });
    expect(unanswered).toBeGreaterThanOrEqual(1);

    // An action while a poll is on its way: the poll's answer, read before the action and
    // answered after the action's own read, is not shown (the row acted on would drop out of the
    // page until the next poll).
    let lateAnswered = false;
    await page.route(
      '**/api/state',
      async (route) => {
        const response = await route.fetch();
        await new Promise((r) => setTimeout(r, 3_000));
        await route.fulfill({ response });
        lateAnswered = true;
      },
      { times: 1 },
    );
    await page.waitForRequest('**/api/state', { timeout: WAIT });
    await pauseBox.fill('demo:other');
    await page.locator('#inbox [data-testid=pause-type-button]').click();
    const row = page.locator('#inbox tr[data-paused-type="demo:other"]');
    await row.waitFor({ timeout: WAIT });
    // Sampled until the late answer is in and for a second after it, when it would be rendered.
    const shown: number[] = [];
    const sample = async () => {
      shown.push(await row.count());
      await new Promise((r) => setTimeout(r, 100));
    };
    while (!lateAnswered) await sample();
    for (let i = 0; i < 10; i++) await sample();
    expect(shown).not.toContain(0);
    await row.locator('button[data-type-action=resume]').click();
    await row.waitFor({ state: 'detached', timeout: WAIT });
  }, 120_000);
});
