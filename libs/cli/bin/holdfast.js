#!/usr/bin/env node
// The `holdfast` bin. Installed from the registry (or a packed tarball) it runs the compiled CLI;
// inside the Holdfast repository, where `npm run build` may not have run, it runs the TypeScript
// sources through the repository's own loader (SWC and the workspace paths).
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const compiled = join(__dirname, '..', 'dist', 'main.js');
const repoLoader = join(__dirname, '..', '..', '..', 'tools', 'register.js');
if (existsSync(compiled)) {
  require(compiled);
} else if (existsSync(repoLoader)) {
  require(repoLoader);
  require(join(__dirname, '..', 'src', 'main.ts'));
} else {
  process.stderr.write(`holdfast: ${compiled} is missing: build @holdfast/cli first (npm run build)\n`);
  process.exitCode = 1;
}
