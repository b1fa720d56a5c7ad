// Runs TypeScript sources directly (demo, benchmarks, forked test workers): SWC transpiles with
// decorator metadata, tsconfig-paths maps @holdfast/<lib> to libs/<lib>/src.
const path = require('node:path');
const root = path.resolve(__dirname, '..');
process.env.SWC_NODE_PROJECT = process.env.SWC_NODE_PROJECT || path.join(root, 'tsconfig.json');
require('tsconfig-paths').register({
  baseUrl: root,
  paths: require(path.join(root, 'tsconfig.json')).compilerOptions.paths,
});
require('@swc-node/register');
