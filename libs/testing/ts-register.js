// Lets a forked test worker run TypeScript (forkTs in @holdfast/testing preloads it with -r).
// It uses the project's own tools, found from the working directory: tsconfig.json (or
// SWC_NODE_PROJECT / TS_NODE_PROJECT), its `paths` through tsconfig-paths when installed, and
// @swc-node/register, or ts-node when that is what the project has.
const fs = require('node:fs');
const path = require('node:path');

const from = [process.cwd(), __dirname];
function tryResolve(id) {
  try {
    return require.resolve(id, { paths: from });
  } catch {
    return undefined;
  }
}

const project = path.resolve(
  process.env.SWC_NODE_PROJECT || process.env.TS_NODE_PROJECT || path.join(process.cwd(), 'tsconfig.json'),
);
if (fs.existsSync(project)) {
  process.env.SWC_NODE_PROJECT = process.env.SWC_NODE_PROJECT || project;
  process.env.TS_NODE_PROJECT = process.env.TS_NODE_PROJECT || project;
  const tsconfigPaths = tryResolve('tsconfig-paths');
  if (tsconfigPaths) {
    const { loadConfig, register } = require(tsconfigPaths);
    const config = loadConfig(project);
    if (config.resultType === 'success' && Object.keys(config.paths).length > 0) {
      register({ baseUrl: config.absoluteBaseUrl, paths: config.paths });
    }
  }
}

const swc = tryResolve('@swc-node/register');
const tsNode = swc ? undefined : tryResolve('ts-node/register/transpile-only');
if (!swc && !tsNode) {
  throw new Error(
    '@holdfast/testing: forkTs runs .ts workers with @swc-node/register or ts-node; install one ' +
      '(npm i -D @swc-node/register) or set HOLDFAST_TS_REGISTER to a module to preload.',
  );
}
require(swc || tsNode);
