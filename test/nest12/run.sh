#!/usr/bin/env bash
# Runs every lib's in-process test suite (SQLite) on NestJS 12. The multi-process suites fork
# workers through tools/register.js, which loads the repo's NestJS 11; they are not part of this step.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
npm ci --no-audit --no-fund --ignore-scripts --legacy-peer-deps
cd ../..
echo "NestJS $(node -p "require('./test/nest12/node_modules/@nestjs/core/package.json').version") for the in-process suites"
HOLDFAST_TEST_DATABASES=sqlite npx jest -c test/nest12/jest.config.js --ci "$@"
