// @holdfast/testing: the test kit (databases from HOLDFAST_TEST_*, forked workers, a TCP proxy
// for outages, private servers and HA clusters). A dev dependency: production installs never carry it.
export * from './test-databases';
export { countPlaceholders } from './placeholders';
export { TcpProxy } from './tcp-proxy';
export { waitUntil, type WaitUntilOptions } from './wait-until';
export { TsRegisterMissingError, WaitTimeoutError } from './errors';
export { PrivateServer, type PrivateServerOptions } from './private-server';
export { PrivatePostgres, postgresBinDir } from './private-postgres';
export { PrivateMariadb } from './private-mariadb';
export {
  GaleraCluster,
  GaleraNode,
  galeraProvider,
  type GaleraClusterOptions,
  type GaleraNodeState,
} from './galera-cluster';
export { PatroniCluster, PatroniNode, type PatroniClusterOptions } from './patroni-cluster';
export { captureOutput, forkTs, waitForMessage, waitForExit, tsRegisterPath } from './fork-worker';
export { describeEachDatabase, type TestDatabaseContext } from './describe-each-database';
