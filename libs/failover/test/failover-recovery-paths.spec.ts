import { Injectable, type INestApplication } from '@nestjs/common';
import { sleep } from '@holdfast/core';
import { describeEachDatabase } from '@holdfast/core/testing';
import { Failover } from '@holdfast/failover';
import { startFailoverApp } from './support/failover-app';

@Injectable()
class Countries {
  up = true;

  @Failover({ name: 'paths-country', expiry: '1h' })
  async find(code: string): Promise<{ code: string; name: string }> {
    if (!this.up) throw new Error('upstream down');
    return { code, name: 'France' };
  }
}

/**
 * A recovery reads the store synchronously when it can (SQLite with its connection free): it
 * must never read on the shared SQLite connection while another transaction holds it, or it
 * would serve that transaction's uncommitted rows.
 */
describeEachDatabase(
  'Failover recovery beside an open transaction on the same DataSource',
  (ctx) => {
    let app: INestApplication | undefined;
    afterEach(async () => {
      await app?.close();
      app = undefined;
    });

    it('serves the committed row, not a row another transaction changed and then rolled back', async () => {
      app = await startFailoverApp(ctx, { async: false }, { providers: [Countries] });
      const countries = app.get(Countries);
      await countries.find('FR');
      countries.up = false;
      const table = `${ctx.prefix}FAILOVER_STORE`;

      let during: Promise<{ name: string } | null> | undefined;
      await expect(
        ctx.sql.transaction(async (tx) => {
          expect(await tx.execute(`UPDATE ${table} SET PAYLOAD = '{"code":"FR","name":"Uncommitted"}'`)).toBe(
            1,
          );
          during = countries.find('FR');
          await sleep(50);
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');

      expect((await during)?.name).toBe('France');
      expect((await countries.find('FR'))?.name).toBe('France');
    });
  },
  { tag: 'paths' },
);
