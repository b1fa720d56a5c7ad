import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { SqlDialect, Statement } from '@holdfast/core/kit';
import { describeEachDatabase } from '@holdfast/testing';
import {
  FAILOVER_KEY_GENERATOR,
  Failover,
  FailoverConfigurationError,
  FailoverModule,
  FailoverStoreQueryResolver,
  getFailoverKeyGeneratorToken,
  PayloadColumnResolver,
  type FailoverModuleOptions,
  type FailoverQueryContext,
  type KeyGenerator,
} from '@holdfast/failover';
import { startFailoverApp } from './support/failover-app';
import { statement } from '@holdfast/core/kit';

/**
 * Issue #34 §2: the key generator, the payload (PAYLOAD column) resolver and the query resolver
 * are providers under tokens FailoverModule registers; an application replaces one the Nest way,
 * with a provider of its own under that token that injects what it needs.
 */

/** What the replacements inject: plain services of the application. */
@Injectable()
class CodeNormalizer {
  normalized = 0;
  normalize(code: string): string {
    this.normalized++;
    return code.trim().toUpperCase();
  }
}

@Injectable()
class SqlAudit {
  readonly statements: string[] = [];
}

@Injectable()
class PayloadTag {
  readonly tag = 'v1|';
}

/** Keys 'fr' and ' FR ' alike, through its injected normalizer. */
@Injectable()
class NormalizingKeys implements KeyGenerator {
  constructor(private readonly codes: CodeNormalizer) {}
  key(args: readonly unknown[]): string {
    return args.map((arg) => this.codes.normalize(String(arg))).join(':');
  }
}

/** Records every statement it builds in the injected audit. */
@Injectable()
class AuditedQueries extends FailoverStoreQueryResolver {
  constructor(private readonly audit: SqlAudit) {
    super();
  }
  override find(ctx: FailoverQueryContext, name: string, key: string): Statement {
    const built = super.find(ctx, name, key);
    this.audit.statements.push(built.sql);
    return built;
  }
}

/** Prefixes PAYLOAD with the injected tag (a format version), and strips it on read. */
@Injectable()
class TaggedPayload extends PayloadColumnResolver {
  constructor(private readonly payloadTag: PayloadTag) {
    super();
  }
  override bind(json: string, dialect: SqlDialect): unknown {
    return super.bind(this.payloadTag.tag + json, dialect);
  }
  override read(value: unknown, failover: string, payloadClass: string): string {
    const text = super.read(value, failover, payloadClass);
    return text.startsWith(this.payloadTag.tag) ? text.slice(this.payloadTag.tag.length) : text;
  }
}

@Injectable()
class Countries {
  up = true;
  @Failover({ name: 'country' })
  async country(code: string): Promise<{ code: string }> {
    if (!this.up) throw new Error('down');
    return { code };
  }
}

/** The application's replacements, in a module of its own (not the root, not FailoverModule's). */
@Module({
  providers: [
    CodeNormalizer,
    SqlAudit,
    PayloadTag,
    { provide: FAILOVER_KEY_GENERATOR, useClass: NormalizingKeys },
    { provide: FailoverStoreQueryResolver, useClass: AuditedQueries },
    { provide: PayloadColumnResolver, useClass: TaggedPayload },
  ],
  exports: [CodeNormalizer, SqlAudit, PayloadTag],
})
class ReplacementsModule {}

/** Only the resolvers' own classes, registered as ordinary providers (for the class options). */
@Module({
  providers: [SqlAudit, PayloadTag, AuditedQueries, TaggedPayload],
  exports: [SqlAudit, PayloadTag],
})
class ResolverClassesModule {}

describeEachDatabase('FailoverModule parts replaced by the application', (ctx) => {
  let app: INestApplication;
  afterEach(async () => {
    await app?.close();
    await ctx.sql.execute(statement(`DELETE FROM ${ctx.prefix}FAILOVER_STORE`)).catch(() => undefined);
  });

  const start = (imports: unknown[], options: Partial<FailoverModuleOptions> = {}) =>
    startFailoverApp(
      ctx,
      { async: false, ...options },
      { imports: imports as never, providers: [Countries] },
    );

  async function storedPayload(): Promise<string> {
    const [row] = await ctx.sql.query<{ payload: unknown }>(
      statement(`SELECT PAYLOAD AS payload FROM ${ctx.prefix}FAILOVER_STORE WHERE FAILOVER_NAME = 'country'`),
    );
    return Buffer.isBuffer(row.payload) ? row.payload.toString('utf8') : String(row.payload);
  }

  it('uses the key generator, the query resolver and the payload resolver the application provides, with their injected dependencies', async () => {
    app = await start([ReplacementsModule]);
    const countries = app.get(Countries);
    expect(await countries.country('fr')).toEqual({ code: 'fr' });
    countries.up = false;
    // Keyed through the injected normalizer: ' FR ' finds what 'fr' stored.
    expect(await countries.country(' FR ')).toEqual({ code: 'fr' });
    expect(app.get(CodeNormalizer).normalized).toBeGreaterThanOrEqual(2);
    // The find statement the store runs was built by the replacement, which told its audit.
    expect(app.get(SqlAudit).statements.some((sql) => sql.includes(`${ctx.prefix}FAILOVER_STORE`))).toBe(
      true,
    );
    // PAYLOAD was bound by the replacement, with its injected tag.
    expect(await storedPayload()).toBe('v1|{"code":"fr"}');
  });

  it('builds the resolver classes given as options through DI: the app’s provider of that class, with its dependencies', async () => {
    app = await start([ResolverClassesModule], {
      store: {
        type: 'sql',
        dataSource: ctx.dataSource,
        tablePrefix: ctx.prefix,
        schema: 'create',
        queryResolver: AuditedQueries,
        payloadColumnResolver: TaggedPayload,
      },
    });
    const countries = app.get(Countries);
    await countries.country('DE');
    countries.up = false;
    expect(await countries.country('DE')).toEqual({ code: 'DE' });
    expect(app.get(SqlAudit).statements.length).toBeGreaterThan(0);
    expect(await storedPayload()).toBe('v1|{"code":"DE"}');
  });

  it('keeps the module’s own parts when the application provides none', async () => {
    app = await start([]);
    const countries = app.get(Countries);
    await countries.country('fr');
    countries.up = false;
    await expect(countries.country('FR')).rejects.toThrow('down');
    expect(await countries.country('fr')).toEqual({ code: 'fr' });
    expect(await storedPayload()).toBe('{"code":"fr"}');
  });
});

describe('a named FailoverModule’s key generator', () => {
  @Injectable()
  class Reports {
    up = true;
    @Failover({ name: 'report', store: 'reports' })
    async report(code: string): Promise<{ code: string }> {
      if (!this.up) throw new Error('down');
      return { code };
    }
  }

  it('is the provider under its own token, getFailoverKeyGeneratorToken(name)', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        FailoverModule.forRoot({ cleanup: { enabled: false }, async: false }),
        FailoverModule.forRoot({ name: 'reports', cleanup: { enabled: false }, async: false }),
      ],
      providers: [
        CodeNormalizer,
        { provide: getFailoverKeyGeneratorToken('reports'), useClass: NormalizingKeys },
        Reports,
      ],
    }).compile();
    const app = await moduleRef.createNestApplication({ logger: false }).init();
    try {
      const reports = app.get(Reports);
      await reports.report('fr');
      reports.up = false;
      expect(await reports.report(' FR ')).toEqual({ code: 'fr' });
      expect(app.get(CodeNormalizer).normalized).toBeGreaterThanOrEqual(2);
    } finally {
      await app.close();
    }
  });
});

describe('two replacements of one part', () => {
  @Module({
    providers: [CodeNormalizer, { provide: FAILOVER_KEY_GENERATOR, useClass: NormalizingKeys }],
  })
  class OneKeys {}
  @Module({
    providers: [CodeNormalizer, { provide: FAILOVER_KEY_GENERATOR, useClass: NormalizingKeys }],
  })
  class OtherKeys {}

  it('stop the bootstrap with a FailoverConfigurationError naming both modules', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [FailoverModule.forRoot({ cleanup: { enabled: false } }), OneKeys, OtherKeys],
      providers: [Countries],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    const error = await app.init().catch((e: unknown) => e);
    await app.close().catch(() => undefined);
    expect(error).toBeInstanceOf(FailoverConfigurationError);
    expect((error as Error).message).toMatch(/provided by 2 modules \(OneKeys, OtherKeys\)/);
  });
});
