import { chromium, type Browser, type Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import { sqlClientFor, statement } from '@holdfast/core/kit';
import { tempSqliteFile } from '@holdfast/testing';
import { eventually, startDemo, type DemoProcess } from './demo-process';

/**
 * Links an operator can paste, and acting on everything a filter matches, in Debian's Chromium
 * (HOLDFAST_CHROMIUM overrides the path) driven by playwright-core, on one demo process with
 * 1,000 parked notes. Every wait is on the page's content.
 */
const CHROMIUM = process.env.HOLDFAST_CHROMIUM ?? '/usr/bin/chromium';
const WAIT = 60_000;
const PARKED = 1_000;
/** The demo's InboxModule retry.maxRetries: a message with this many failed attempts is parked. */
const DEMO_MAX_RETRIES = 3;

describe('the dashboard in Chromium: pasted links and everything matching', () => {
  let demo: DemoProcess;
  let browser: Browser;
  let page: Page;
  const ids: string[] = [];

  beforeAll(async () => {
    const file = tempSqliteFile('dashboard-links');
    demo = await startDemo(file);
    await eventually(
      async () => ((await demo.get('/inbox')).status === 200 ? true : undefined),
      WAIT,
      'the demo inbox',
    );
    // 1,000 notes parked as the inbox parks them (RETRIES at maxRetries), written beside the demo.
    const dataSource = await new DataSource({
      type: 'better-sqlite3',
      database: file,
      timeout: 10_000,
    }).initialize();
    try {
      const sql = sqlClientFor(dataSource);
      const now = Date.now();
      await sql.transaction(async (tx) => {
        for (let i = 0; i < PARKED; i++) {
          const id = `parked-${String(i).padStart(4, '0')}`;
          ids.push(id);
          await tx.execute(
            statement(
              'INSERT INTO COR_MESSAGE (ID, PAYLOAD_ENCODING, PAYLOAD_TYPE_NAMESPACE, PAYLOAD_TYPE_NAME, INSERTED, RETRIES, ERROR) ' +
                `VALUES (${tx.dialect.placeholders(7)})`,
              [
                id,
                'json',
                'demo',
                'note',
                tx.dialect.timestampParam(new Date(now - 3_600_000 + i)),
                DEMO_MAX_RETRIES,
                'failed',
              ],
            ),
          );
        }
      });
    } finally {
      await dataSource.destroy();
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(demo.base + '/');
    await page
      .locator('#inbox [data-count="parked"] .n', { hasText: new RegExp(`^${PARKED}$`) })
      .waitFor({ timeout: WAIT });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await demo?.stop();
  });

  const summary = (p: Page) => p.locator('#inbox [data-testid=by-type-summary]');

  it('pages to the last of 1,000 parked, selects a message, and a pasted link (or a refresh) reopens the same view', async () => {
    await page.locator('#inbox [data-testid=find-type]').fill('demo:note');
    await page.locator('#inbox [data-testid=find-type-status]').selectOption('parked');
    await page.locator('#inbox [data-testid=list-type]').click();
    await summary(page)
      .filter({ hasText: `messages 1–20 of ${PARKED} parked of type demo:note` })
      .waitFor({ timeout: WAIT });
    await page.locator('#inbox [data-testid=by-type-summary] button[data-page=last]').click();
    await summary(page)
      .filter({ hasText: `messages 981–1000 of ${PARKED} parked of type demo:note` })
      .waitFor({ timeout: WAIT });
    const last = ids[PARKED - 1];
    await page
      .locator(`#inbox [data-testid=by-type-list] tr[data-message-id="${last}"]`)
      .waitFor({ timeout: WAIT });
    // The operator selects the last message to look at it.
    await page.locator('#inbox [data-testid=find-id]').fill(last);
    await page.locator('#inbox [data-testid=find-button]').click();
    await page
      .locator('#inbox [data-testid=found]', { hasText: `${last} demo:note, parked` })
      .waitFor({ timeout: WAIT });

    // The address says it all: inbox view, filter, page and the message selected.
    const link = new URL(page.url());
    expect(Object.fromEntries(link.searchParams)).toEqual({
      type: 'demo:note',
      status: 'parked',
      offset: '980',
      id: last,
    });

    // Pasted into another tab: the same view, without a click.
    const pasted = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    try {
      await pasted.goto(link.toString());
      await summary(pasted)
        .filter({ hasText: `messages 981–1000 of ${PARKED} parked of type demo:note` })
        .waitFor({ timeout: WAIT });
      await pasted
        .locator('#inbox [data-testid=found]', { hasText: `${last} demo:note, parked` })
        .waitFor({ timeout: WAIT });
      expect(await pasted.locator('#inbox [data-testid=find-type]').inputValue()).toBe('demo:note');
      expect(await pasted.locator('#inbox [data-testid=find-id]').inputValue()).toBe(last);
    } finally {
      await pasted.close();
    }

    // A refresh keeps the selected id (and the page) too.
    await page.reload();
    await page
      .locator('#inbox [data-testid=found]', { hasText: `${last} demo:note, parked` })
      .waitFor({ timeout: WAIT });
    await summary(page)
      .filter({ hasText: `messages 981–1000 of ${PARKED} parked of type demo:note` })
      .waitFor({ timeout: WAIT });
  }, 120_000);

  it('deletes all 1,000 matching after confirming their count, not only the page shown', async () => {
    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.accept();
    });
    await page
      .locator('#inbox [data-testid=by-type-all] button[data-bulk-matching=delete]', {
        hasText: `delete all ${PARKED} matching`,
      })
      .click();
    await summary(page).filter({ hasText: 'No parked message of type demo:note' }).waitFor({ timeout: WAIT });
    expect(asked).toBe(`delete all ${PARKED} parked message(s) of type demo:note?`);
    await page.locator('#inbox [data-count="parked"] .n', { hasText: /^0$/ }).waitFor({ timeout: WAIT });
    await page
      .locator('#notice', { hasText: 'delete all parked of type demo:note: done' })
      .waitFor({ timeout: WAIT });
    expect((await demo.get('/inbox')).body.counts.parked).toBe(0);
    // The audit line, at log level, names what and how many.
    await eventually(
      async () =>
        /delete \(matching status parked, type demo:note\) 1000 of 1000 message\(s\)/.test(demo.output())
          ? true
          : undefined,
      WAIT,
      'the audit line',
    );
  }, 120_000);
});
