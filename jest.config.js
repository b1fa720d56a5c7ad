// One Jest project per lib, the demo app, and the cross-package suites in test/.
// Which databases the integration tests run against: HOLDFAST_TEST_DATABASES=sqlite,postgres,mariadb
const fs = require('node:fs');
const path = require('node:path');

const swcrc = JSON.parse(fs.readFileSync(path.join(__dirname, '.swcrc'), 'utf8'));
delete swcrc.$schema;

const moduleNameMapper = {
  '^@holdfast/core/testing$': '<rootDir>/libs/core/src/testing',
  '^@holdfast/([a-z]+)$': '<rootDir>/libs/$1/src',
};

// Suites that need a database server; with only SQLite selected they are left out of the run
// (each says so in its header) instead of failing as empty.
const serversSelected = (process.env.HOLDFAST_TEST_DATABASES ?? 'sqlite')
  .split(',')
  .some((d) => d.trim() && d.trim() !== 'sqlite');
const serverOnly = serversSelected
  ? []
  : ['/libs/locker/test/lock-connection.spec.ts', '/test/inbox/accept-under-load.spec.ts'];

function project(displayName, roots, extra = {}) {
  return {
    displayName,
    rootDir: __dirname,
    roots: roots.map((r) => `<rootDir>/${r}`),
    testEnvironment: 'node',
    testMatch: ['**/*.spec.ts'],
    transform: { '^.+\\.ts$': ['@swc/jest', swcrc] },
    moduleNameMapper,
    testPathIgnorePatterns: ['/node_modules/', ...serverOnly],
    ...extra,
  };
}

module.exports = {
  testTimeout: 60_000,
  projects: [
    ...['core', 'failover', 'simba', 'locker', 'inbox', 'cli', 'dashboard']
      .filter((lib) => fs.existsSync(path.join(__dirname, 'libs', lib, 'src', 'index.ts')))
      .map((lib) => project(lib, [`libs/${lib}`])),
    project('demo', ['apps/demo']),
    project('e2e', ['test'], { testPathIgnorePatterns: ['/node_modules/', '/test/nest12/', ...serverOnly] }),
  ],
};
