import { tableName } from '@holdfast/core/kit';
import { describeEachDatabase } from '@holdfast/testing';
import { FAR_FUTURE } from '@holdfast/inbox/internal';
import { HOLDFAST_TABLES, type HoldfastStatus } from '../src';
import { cli, insert, testDatabaseUrl } from './cli-support';

describeEachDatabase(
  'holdfast status',
  (ctx) => {
    let env: NodeJS.ProcessEnv;
    let now: number;

    beforeAll(async () => {
      env = { DATABASE_URL: testDatabaseUrl(ctx.db, ctx.dataSource), HOLDFAST_TABLE_PREFIX: ctx.prefix };
      const migrated = await cli(['migrate'], env);
      expect(migrated.stderr).toBe('');
      const t = (name: string) => tableName(ctx.prefix, name);
      const sql = ctx.sql;
      now = await sql.nowMillis();
      // The fencing token is acquired_at (the grant's database time); version is Simba's lock.
      const mutex = (mutex: string, owner: string, token: number, ttl: number, transition: number) =>
        insert(sql, t('simba_mutex'), {
          mutex,
          owner_id: owner,
          version: 1,
          acquired_at: token,
          ttl_at: now + ttl,
          transition_at: now + transition,
        });
      await mutex('orders-leader', 'node-1', 7, 60_000, 90_000);
      await mutex('reports', 'node-2', 3, -60_000, 60_000);
      await mutex('nightly', '', 4, -120_000, -60_000);

      await insert(sql, t('HOLDFAST_LOCK'), { ID: 'broker', BROKER_NAME: 'node-1', TIME: now + 60_000 });
      await insert(sql, t('HOLDFAST_LOCK'), { ID: 'idle', BROKER_NAME: null, TIME: null });

      // COR_MESSAGE times are timestamps, written the way the inbox writes them.
      const at = (ms: number) => sql.dialect.timestampParam(new Date(ms));
      const message = (id: string, inserted: number, extra: Record<string, unknown> = {}) =>
        insert(sql, t('COR_MESSAGE'), {
          ID: id,
          PAYLOAD_ENCODING: 'json',
          PAYLOAD_TYPE_NAME: 'ping',
          INSERTED: at(inserted),
          RETRIES: 0,
          ...extra,
        });
      await message('due-1', now - 30_000);
      await message('due-2', now - 5_000, { NEXT_RETRY: at(now - 1_000), RETRIES: 1 });
      await message('retrying', now - 40_000, { NEXT_RETRY: at(now + 600_000), RETRIES: 2 });
      await message('paused', now - 50_000, { NEXT_RETRY: at(FAR_FUTURE) });
      // Attempts used up (maxRetries 5 below): parked, with or without a next retry.
      await message('parked', now - 60_000, { RETRIES: 6, ERROR: 'boom' });
      await message('parked-late', now - 70_000, { RETRIES: 5, NEXT_RETRY: at(now - 30_000), ERROR: 'boom' });
      await message('expired', now - 90_000, { EXPIRATION: at(now - 1_000) });

      const entry = (name: string, key: string, asOf: number, expireOn: number) =>
        insert(sql, t('FAILOVER_STORE'), {
          FAILOVER_NAME: name,
          FAILOVER_KEY: key,
          AS_OF: sql.dialect.timestampParam(new Date(asOf)),
          EXPIRE_ON: sql.dialect.timestampParam(new Date(expireOn)),
          PAYLOAD: '{}',
          PAYLOAD_CLASS: 'Object',
        });
      await entry('country', 'FR', now - 10_000, now + 3_600_000);
      await entry('country', 'DE', now - 20_000, now + 3_600_000);
      await entry('country', 'IT', now - 7_200_000, now - 3_600_000);
      await entry('rates', 'EUR', now - 7_200_000, now - 60_000);
    });

    it('--json: owners, masters, inbox counts and live failover entries, on the database clock', async () => {
      const { code, stdout, stderr } = await cli(['status', '--json', '--max-retries', '5'], env);
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      const status = JSON.parse(stdout) as HoldfastStatus;
      expect(status.prefix).toBe(ctx.prefix);
      const skew = status.databaseNow - now;
      expect(skew).toBeGreaterThanOrEqual(0);
      expect(skew).toBeLessThan(60_000);

      expect(status.owners?.map(({ expiresInMs: _, ...m }) => m)).toEqual([
        { mutex: 'nightly', owner: null, fencingToken: 4, state: 'free' },
        { mutex: 'orders-leader', owner: 'node-1', fencingToken: 7, state: 'owned' },
        { mutex: 'reports', owner: 'node-2', fencingToken: 3, state: 'transition' },
      ]);
      const leader = status.owners?.find((m) => m.mutex === 'orders-leader');
      expect(leader?.expiresInMs).toBe(now + 60_000 - status.databaseNow);

      expect(status.masters).toEqual([
        { lock: 'broker', master: 'node-1', timeFromNowMs: now + 60_000 - status.databaseNow },
        { lock: 'idle', master: null, timeFromNowMs: null },
      ]);
      expect(status.inbox).toEqual({
        maxRetries: 5,
        total: 7,
        due: 2,
        retrying: 1,
        paused: 1,
        parked: 2,
        expired: 1,
        oldestDueAgeMs: status.databaseNow - (now - 30_000),
        byRetries: [
          { retries: 0, count: 2 },
          { retries: 1, count: 1 },
          { retries: 2, count: 1 },
          { retries: 5, count: 1 },
          { retries: 6, count: 1 },
        ],
      });
      expect(status.failover).toEqual([
        { failover: 'country', liveEntries: 2, newestAsOf: new Date(now - 10_000).toISOString() },
      ]);
    });

    it('prints the same as a table', async () => {
      const { code, stdout } = await cli(['status'], { ...env, HOLDFAST_INBOX_MAX_RETRIES: '5' });
      expect(code).toBe(0);
      expect(stdout).toMatch(/orders-leader\s+node-1\s+7\s+owned\s+\d+\.\ds/);
      expect(stdout).toMatch(/broker\s+node-1\s+lease ends in \d+\.\ds/);
      expect(stdout).toMatch(
        /TOTAL\s+DUE\s+RETRYING\s+PAUSED\s+PARKED\s+EXPIRED\s+OLDEST DUE\n\s+7\s+2\s+1\s+1\s+2\s+1\s+\d+\.\ds ago/,
      );
      expect(stdout).toContain(
        'unexpired messages by RETRIES (failed attempts): 0: 2, 1: 1, 2: 1, 5: 1, 6: 1',
      );
      expect(stdout).toContain('parked: RETRIES >= 5 (maxRetries)');
      expect(stdout).toMatch(/country\s+2\s+\d{4}-/);
      expect(stdout).not.toContain('rates');
    });

    it("without the inbox's maxRetries, guesses no count that depends on it", async () => {
      const { code, stdout } = await cli(['status', '--json'], env);
      expect(code).toBe(0);
      const inbox = (JSON.parse(stdout) as HoldfastStatus).inbox!;
      expect(inbox).toMatchObject({
        maxRetries: null,
        total: 7,
        due: null,
        retrying: null,
        paused: null,
        parked: null,
        expired: 1,
        oldestDueAgeMs: null,
      });
      expect(inbox.byRetries.map((r) => r.retries)).toEqual([0, 1, 2, 5, 6]);
      const text = await cli(['status'], env);
      expect(text.stdout).toMatch(/\n\s+7\s+\?\s+\?\s+\?\s+\?\s+1\s+-\n/);
      expect(text.stdout).toContain('give it with --max-retries N or HOLDFAST_INBOX_MAX_RETRIES');
    });

    it('--max-retries tells parked from due as the application configured it', async () => {
      // The demo's 3: 'due-2' (RETRIES 1) stays due, 'retrying' (RETRIES 2) still retrying.
      const three = await cli(['status', '--json', '--max-retries', '3'], env);
      expect((JSON.parse(three.stdout) as HoldfastStatus).inbox).toMatchObject({ due: 2, parked: 2 });
      const ten = await cli(['status', '--json', '--inbox-max-retries', '10'], env);
      expect(ten.code).toBe(0);
      // RETRIES 5 with a past NEXT_RETRY is due again under 10; RETRIES 6 (no NEXT_RETRY) too.
      expect((JSON.parse(ten.stdout) as HoldfastStatus).inbox).toMatchObject({ due: 4, parked: 0 });
      const bad = await cli(['status', '--max-retries', 'many'], env);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("--max-retries must be a whole number, got 'many'");
      const badEnv = await cli(['status'], { ...env, HOLDFAST_INBOX_MAX_RETRIES: '-1' });
      expect(badEnv.code).toBe(2);
      expect(badEnv.stderr).toContain("HOLDFAST_INBOX_MAX_RETRIES must be a whole number, got '-1'");
    });

    it('refuses a prefix with no Holdfast table (exit 1), naming the prefixes that have some', async () => {
      // A mistyped prefix used to answer every section null with exit code 0: an empty system.
      const typo = `${ctx.prefix}none_`;
      const json = await cli(['status', '--json', '--prefix', typo], env);
      expect(json.code).toBe(1);
      const { error } = JSON.parse(json.stdout) as { error: { code: string; message: string } };
      expect(error.code).toBe('HOLDFAST_CLI_NO_TABLES');
      expect(error.message).toContain(`there is no Holdfast table under prefix '${typo}'`);
      // PostgreSQL folds the unquoted names of the tables to lower case.
      expect(error.message.toLowerCase()).toContain(`'${ctx.prefix.toLowerCase()}'`);
      const text = await cli(['status', '--prefix', typo], env);
      expect(text).toMatchObject({ code: 1, stdout: '' });
      expect(text.stderr).toMatch(
        /^holdfast status: there is no Holdfast table under prefix .*\[HOLDFAST_CLI_NO_TABLES\]\n$/,
      );
    });
  },
  { tables: [...HOLDFAST_TABLES.map((t) => t.name), 'migrations'], tag: 'cls' },
);
