#!/usr/bin/env node
// The `holdfast` bin. Installed from the registry (or a packed tarball) it runs the compiled CLI.
// Inside the Holdfast repository it runs the TypeScript sources through the repository's own
// loader (SWC and the workspace paths), so it needs no `npm run build` and never runs a stale dist/.
const { existsSync, realpathSync } = require('node:fs');
const { join } = require('node:path');

const pkg = join(__dirname, '..');
const repo = join(pkg, '..', '..');
const inRepository =
  existsSync(join(repo, 'tools', 'register.js')) &&
  existsSync(join(repo, 'libs', 'cli')) &&
  realpathSync(join(repo, 'libs', 'cli')) === realpathSync(pkg);

if (inRepository) {
  require(join(repo, 'tools', 'register.js'));
  require(join(pkg, 'src', 'main.ts'));
} else {
  require(join(pkg, 'dist', 'main.js'));
}
