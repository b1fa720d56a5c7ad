import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { describeEachDatabase } from '@holdfast/testing';
import { Failover, FailoverExecutor, FailoverModule } from '@holdfast/failover';
import {
  FailoverAnswers,
  FailoverKeeper,
  FailoverParts,
  FailoverRecovery,
  FailoverRuntimes,
  FailoverStoreBreaker,
} from '@holdfast/failover/internal';
import { statement } from '@holdfast/core/kit';

/**
 * Issue #44 item 4: the executor's parts are providers Nest builds (each one instance per
 * module), so a test or an application sees them and can replace one the Nest way.
 */

class UpstreamDown extends Error {}

@Injectable()
class Quotes {
  up = true;

  @Failover({ name: 'parts-quote' })
  async quote(symbol: string): Promise<{ symbol: string; price: number }> {
    if (!this.up) throw new UpstreamDown('down');
    return { symbol, price: 7 };
  }
}

/** A recovery that counts what it answers (the replacement under test). */
@Injectable()
class CountingRecovery extends FailoverRecovery {
  recovered = 0;
  override recover<T>(...args: Parameters<FailoverRecovery['recover']>): T | null | Promise<T | null> {
    this.recovered++;
    return super.recover<T>(...args);
  }
}

describeEachDatabase('FailoverExecutor parts as providers (#44 item 4)', (ctx) => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
    await ctx.sql.execute(statement(`DELETE FROM ${ctx.prefix}FAILOVER_STORE`)).catch(() => undefined);
  });

  const compile = (replace?: boolean) => {
    const builder = Test.createTestingModule({
      imports: [
        FailoverModule.forRoot({
          store: { type: 'sql', dataSource: ctx.dataSource, tablePrefix: ctx.prefix, schema: 'create' },
          cleanup: { enabled: false },
          async: false,
        }),
      ],
      providers: [Quotes],
    });
    if (replace) builder.overrideProvider(FailoverRecovery).useClass(CountingRecovery);
    return builder.compile();
  };

  it('each part is one provider instance, shared by the executor and the other parts', async () => {
    app = await (await compile()).createNestApplication({ logger: false }).init();
    const parts = app.get(FailoverParts);
    expect(parts.runtimes).toBe(app.get(FailoverRuntimes));
    expect(parts.guard).toBe(app.get(FailoverStoreBreaker).guard);
    const answers = app.get(FailoverAnswers);
    expect(answers.keeper).toBe(app.get(FailoverKeeper));
    expect(answers.recovery).toBe(app.get(FailoverRecovery));
    expect(app.get(FailoverExecutor).storeSkipped).toBe(false);
  });

  it('a part replaced with overrideProvider is the one the executor uses', async () => {
    app = await (await compile(true)).createNestApplication({ logger: false }).init();
    const quotes = app.get(Quotes);
    await quotes.quote('ACME');
    quotes.up = false;
    expect(await quotes.quote('ACME')).toEqual({ symbol: 'ACME', price: 7 });
    const recovery = app.get(FailoverRecovery);
    expect(recovery).toBeInstanceOf(CountingRecovery);
    expect((recovery as CountingRecovery).recovered).toBe(1);
  });
});
