// One Jest project per lib, the demo app, and the cross-package suites in test/.
// Which databases the integration tests run against: HOLDFAST_TEST_DATABASES=sqlite,postgres,mariadb
const fs = require('node:fs');
const path = require('node:path');

const swcrc = JSON.parse(fs.readFileSync(path.join(__dirname, '.swcrc'), 'utf8'));
delete swcrc.$schema;

const moduleNameMapper = {
  '^@holdfast/core/kit$': '<rootDir>/libs/core/src/kit',
  // The top-level migrations/ folder, which the CLI package ships as @holdfast/cli/migrations.
  '^@holdfast/cli/migrations$': '<rootDir>/migrations',
  '^@holdfast/([a-z]+)/internal$': '<rootDir>/libs/$1/src/internal',
  '^@holdfast/([a-z]+)$': '<rootDir>/libs/$1/src',
};

// Suites that need a database server; with only SQLite selected they are left out of the run
// (each says so in its header) instead of failing as empty.
const serversSelected = (process.env.HOLDFAST_TEST_DATABASES ?? 'sqlite')
  .split(',')
  .some((d) => d.trim() && d.trim() !== 'sqlite');
const serverOnly = serversSelected
  ? []
  : [
      '/libs/locker/test/lock-connection.spec.ts',
      '/libs/locker/test/round-trips.spec.ts',
      '/libs/inbox/test/round-trips.spec.ts',
      '/libs/simba/test/round-trips.spec.ts',
      '/test/inbox/accept-under-load.spec.ts',
      '/test/outage/quiet-outage.spec.ts',
      '/test/inbox/silent-worker.spec.ts',
      '/test/inbox/blackhole.spec.ts',
      '/test/inbox/unanswered-claim.spec.ts',
      '/test/inbox/unanswered-heartbeat.spec.ts',
      '/test/simba/frozen-renewal.spec.ts',
      '/test/simba/silent-connections.spec.ts',
      '/test/locker/silent-connections.spec.ts',
      '/test/inbox/silent-connections.spec.ts',
      '/libs/failover/test/failover-silent-connections.e2e.spec.ts',
      '/libs/core/test/coordination-pool-close.spec.ts',
      '/libs/core/test/connection-budget.spec.ts',
      '/test/pool/app-load/',
      '/test/partition/locker-partition.spec.ts',
      '/test/interop/failover-java-reader.spec.ts',
      '/test/partition/silent-connections.spec.ts',
      '/test/fleet/',
    ];

// The soaks and the long multi-process tests run under `npm run test:soak` (HOLDFAST_TEST_SOAK=1),
// not in the default `npm test`; .ci/run runs both.
const soakSuites = [
  '/test/fault/',
  '/test/partition/',
  '/test/deploy/rolling-deploy.spec.ts',
  '/test/inbox/group-order-soak.spec.ts',
  '/test/simba/soak.spec.ts',
  '/test/pool/app-load/',
  '/test/simba/scale.spec.ts',
  '/test/simba/failover-tokens.spec.ts',
  '/test/locker/scheduled-lock.spec.ts',
  '/test/locker/locker-failover.spec.ts',
  '/libs/simba/test/multi-contend.spec.ts',
  // A live ActiveMQ broker (two JVM starts per case) beside Holdfast: the database pairings on
  // PostgreSQL and MariaDB, and the skewed broker clock (the file pairing stays in the default run).
  '/test/activemq/database-pairings.spec.ts',
  '/test/activemq/clock-skew.spec.ts',
  '/test/fleet/',
];
const soak = process.env.HOLDFAST_TEST_SOAK === '1';
// More path fragments to leave out, comma-separated (the PgBouncer step uses it).
const excluded = (process.env.HOLDFAST_TEST_EXCLUDE ?? '')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
// PostgreSQL-only suites (LISTEN/NOTIFY), left out when PostgreSQL is not selected.
const postgresSelected = (process.env.HOLDFAST_TEST_DATABASES ?? 'sqlite')
  .split(',')
  .some((d) => d.trim() === 'postgres');
const postgresOnly = postgresSelected
  ? []
  : ['/test/inbox/notify.spec.ts', '/libs/core/test/pg-listener.spec.ts'];
const ignored = ['/node_modules/', ...serverOnly, ...postgresOnly, ...excluded].map(escape);
// The HA-cluster suites (Galera, Patroni) start clusters of their own and run only under
// `npm run test:cluster` (HOLDFAST_TEST_CLUSTERS=1), in their own CI step.
const clusterSuites = ['/test/cluster/'];
const clusters = process.env.HOLDFAST_TEST_CLUSTERS === '1';
const soakOnly = clusters
  ? [`^(?!.*(${clusterSuites.map(escape).join('|')}))`]
  : [
      ...(soak ? [`^(?!.*(${soakSuites.map(escape).join('|')}))`] : soakSuites.map(escape)),
      ...clusterSuites.map(escape),
    ];

function project(displayName, roots, extra = {}) {
  return {
    displayName,
    rootDir: __dirname,
    roots: roots.map((r) => `<rootDir>/${r}`),
    // Silent unless a test fails (HOLDFAST_TEST_VERBOSE=1 shows everything as it happens).
    testEnvironment: '<rootDir>/tools/jest/quiet-environment.js',
    setupFilesAfterEnv: ['<rootDir>/tools/jest/quiet-setup.js'],
    testMatch: ['**/*.spec.ts'],
    transform: { '^.+\\.ts$': ['@swc/jest', swcrc] },
    moduleNameMapper,
    testPathIgnorePatterns: [...ignored, ...soakOnly],
    ...extra,
  };
}

module.exports = {
  testTimeout: 60_000,
  projects: [
    ...['core', 'failover', 'simba', 'locker', 'inbox', 'cli', 'dashboard', 'testing']
      .filter((lib) => fs.existsSync(path.join(__dirname, 'libs', lib, 'src', 'index.ts')))
      .map((lib) => project(lib, [`libs/${lib}`])),
    project('demo', ['apps/demo']),
    project('e2e', ['test'], { testPathIgnorePatterns: [...ignored, '/test/nest12/', ...soakOnly] }),
  ],
};
