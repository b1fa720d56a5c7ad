/**
 * Failover rows a Java service can read: Holdfast stores through its real `@Failover` path with
 * `javaClass`, and a Java program reads FAILOVER_STORE the way Société Générale's failover does
 * (`Class.forName(PAYLOAD_CLASS)`, Jackson `readValue`; test/interop/java FailoverReader), on
 * PostgreSQL and MariaDB. Holdfast still recovers the same rows as its own classes. (Java rows
 * read by Holdfast: libs/failover/test/failover-seed-options.spec.ts.)
 */
import 'reflect-metadata';
import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { createTestDataSource, testDatabases, uniqueTablePrefix } from '@holdfast/testing';
import type { DataSource } from 'typeorm';
import { Failover, FailoverModule } from '@holdfast/failover';
import { jdbcUrl, runJava } from './support/java';
import type { ServerDatabase } from './support/seed-ddl';

jest.setTimeout(120_000);

/** The Java record holdfast.interop.FailoverReader$Country, as the Nest service has it. */
class Country {
  code!: string;
  population!: number;
}

const JAVA_COUNTRY = 'holdfast.interop.FailoverReader$Country';
const country = (code: string, population: number) => Object.assign(new Country(), { code, population });

@Injectable()
class Referential {
  down = false;

  private upstream<T>(value: T): T {
    if (this.down) throw new Error('referential down');
    return value;
  }

  @Failover({ name: 'java-one', type: Country, javaClass: JAVA_COUNTRY })
  async one(code: string): Promise<Country> {
    return this.upstream(country(code, 68));
  }

  @Failover({ name: 'java-list', type: [Country], javaClass: 'java.util.ArrayList' })
  async list(codes: string): Promise<Country[]> {
    return this.upstream(codes.split(',').map((c, i) => country(c, i + 1)));
  }

  @Failover({ name: 'java-array', type: [Country], javaClass: `[L${JAVA_COUNTRY};` })
  async array(codes: string): Promise<Country[]> {
    return this.upstream(codes.split(',').map((c, i) => country(c, 10 * (i + 1))));
  }

  @Failover({ name: 'java-text', javaClass: 'java.lang.String' })
  async text(code: string): Promise<string> {
    return this.upstream(`name of ${code}`);
  }
}

const SERVERS = testDatabases().filter((db): db is ServerDatabase => db !== 'sqlite');

for (const db of SERVERS) {
  describe(`failover rows a Java service reads (javaClass) [${db}]`, () => {
    let app: INestApplication;
    const ctx = { prefix: uniqueTablePrefix('ijr'), dataSource: undefined as unknown as DataSource };

    beforeAll(async () => {
      ctx.dataSource = await createTestDataSource(db);
      const moduleRef = await Test.createTestingModule({
        imports: [
          FailoverModule.forRoot({
            store: { type: 'sql', dataSource: ctx.dataSource, tablePrefix: ctx.prefix, schema: 'create' },
            async: false,
            cleanup: { enabled: false },
          }),
        ],
        providers: [Referential],
      }).compile();
      app = await moduleRef.createNestApplication({ logger: false }).init();
      const referential = app.get(Referential);
      await referential.one('FR');
      await referential.list('FR,DE');
      await referential.array('IT,ES');
      await referential.text('FR');
    });

    afterAll(async () => {
      await app?.close();
      await ctx.dataSource?.query(`DROP TABLE IF EXISTS ${ctx.prefix}FAILOVER_STORE`).catch(() => undefined);
      await ctx.dataSource?.destroy();
    });

    /** FailoverReader's lines for a failover: [PAYLOAD_CLASS, class built, value]. */
    const javaReads = async (name: string) =>
      (await runJava('FailoverReader', [jdbcUrl(db), `${ctx.prefix}FAILOVER_STORE`, name]))
        .trim()
        .split('\n')
        .map((line) => line.split('\t').slice(1));

    it('a class: Java loads the named class and Jackson builds it', async () => {
      expect(await javaReads('java-one')).toEqual([
        [JAVA_COUNTRY, JAVA_COUNTRY, 'Country[code=FR, population=68]'],
      ]);
    });

    it('a list as java.util.ArrayList: Java reads a list (its elements as maps, as with its own List rows)', async () => {
      expect(await javaReads('java-list')).toEqual([
        [
          'java.util.ArrayList',
          'java.util.ArrayList',
          '[LinkedHashMap:{code=FR, population=1}, LinkedHashMap:{code=DE, population=2}]',
        ],
      ]);
    });

    it('a list as a Java array class: the element class comes along', async () => {
      expect(await javaReads('java-array')).toEqual([
        [
          `[L${JAVA_COUNTRY};`,
          `[L${JAVA_COUNTRY};`,
          '[Country:Country[code=IT, population=10], Country:Country[code=ES, population=20]]',
        ],
      ]);
    });

    it('a string as java.lang.String', async () => {
      expect(await javaReads('java-text')).toEqual([['java.lang.String', 'java.lang.String', 'name of FR']]);
    });

    it('Holdfast recovers the same rows as its own classes', async () => {
      const referential = app.get(Referential);
      referential.down = true;
      try {
        const one = await referential.one('FR');
        expect(one).toBeInstanceOf(Country);
        expect(one).toMatchObject({ code: 'FR', population: 68 });
        const list = await referential.list('FR,DE');
        expect(list.map((c) => c instanceof Country && c.code)).toEqual(['FR', 'DE']);
        const array = await referential.array('IT,ES');
        expect(array.map((c) => c instanceof Country && c.population)).toEqual([10, 20]);
        expect(await referential.text('FR')).toBe('name of FR');
      } finally {
        referential.down = false;
      }
    });
  });
}
