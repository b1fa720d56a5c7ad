// The libs' in-process suites against NestJS 12 (ESM-only): @nestjs/* resolves to the copies
// installed here, and @swc/jest turns their ESM into CommonJS for Jest on Node 20.
const fs = require('node:fs');
const path = require('node:path');

const repo = path.resolve(__dirname, '../..');
const swcrc = JSON.parse(fs.readFileSync(path.join(repo, '.swcrc'), 'utf8'));
delete swcrc.$schema;
const here = path.relative(repo, __dirname);
// The suites the root config leaves out of a run on the same databases (run.sh selects SQLite):
// server-only suites, which hold no test there, and the soaks' multi-process suites.
const rootIgnored = require('../../jest.config.js').projects.find(
  (p) => p.displayName === 'core',
).testPathIgnorePatterns;

module.exports = {
  rootDir: repo,
  roots: ['<rootDir>/libs', `<rootDir>/${here}`],
  testMatch: ['**/libs/*/test/**/*.spec.ts', `**/${here}/*.spec.ts`],
  testPathIgnorePatterns: rootIgnored,
  testEnvironment: 'node',
  testTimeout: 60_000,
  transform: {
    '^.+\\.(t|m?j)s$': [
      '@swc/jest',
      { ...swcrc, jsc: { ...swcrc.jsc, parser: { syntax: 'typescript', decorators: true } } },
    ],
  },
  transformIgnorePatterns: [
    `/node_modules/(?!(@nestjs|file-type|strtok3|token-types|peek-readable|@tokenizer|uint8array-extras|@borewit)/)`,
  ],
  moduleNameMapper: {
    '^@holdfast/core/kit$': '<rootDir>/libs/core/src/kit',
    // The top-level migrations/ folder, which the CLI package ships as @holdfast/cli/migrations.
    '^@holdfast/cli/migrations$': '<rootDir>/migrations',
    '^@holdfast/([a-z]+)/internal$': '<rootDir>/libs/$1/src/internal',
    '^@holdfast/([a-z]+)$': '<rootDir>/libs/$1/src',
    '^@nestjs/(common|core|testing|typeorm|schedule|terminus|platform-express)(/.*)?$': `<rootDir>/${here}/node_modules/@nestjs/$1$2`,
  },
};
