#!/usr/bin/env bash
# Installs Holdfast the way a user would: every package packed with `npm pack` into a throwaway
# directory outside the repository, installed from those tarballs into a fresh Nest application
# that has only its own package.json (everything else from the npm registry), compiled with
# `tsc --strict`, its tables made with the packed `holdfast migrate`, then booted on SQLite using
# each module once. Then again on TypeORM 0.3.x.
#   bash test/package/run.sh            both TypeORM lines
#   HOLDFAST_PACKAGE_KEEP=1 ...         keep the directory (printed) for a look
#   HOLDFAST_PACKAGE_OPTIONAL_PEERS=1   the app also installs @nestjs/terminus and @opentelemetry/api
# By default the optional peers (@nestjs/terminus, @opentelemetry/api, nestjs-cls) are not
# installed: an app that does not use them must not need them. Last, an application that
# installs only core, the inbox and the dashboard (the other modules are the dashboard's optional peers).
# The test kit, @holdfast/testing, is installed as a dev dependency; the production tarballs must not carry it.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/holdfast-package.XXXXXX")"
cleanup() { if [ -z "${HOLDFAST_PACKAGE_KEEP:-}" ]; then rm -rf "$work"; else echo "kept $work"; fi; }
trap cleanup EXIT
step() { printf '\n--- package test: %s\n' "$*"; }

step "pack every package into $work/tarballs"
mkdir -p "$work/tarballs"
cd "$repo"
# What each package's prepack does (an empty dist, then tsc -b --force), once for all of them: run
# per package it rebuilt @holdfast/core eight times (75 s of this step). Then packed as is.
libs=(core simba failover locker inbox cli dashboard testing)
for lib in "${libs[@]}"; do rm -rf "libs/$lib/dist"; done
npx tsc -b --force $(printf 'libs/%s/tsconfig.build.json ' "${libs[@]}")
for lib in "${libs[@]}"; do
  (cd "libs/$lib" && npm pack --silent --ignore-scripts --pack-destination "$work/tarballs" >/dev/null)
done
ls "$work/tarballs"
tarball() { ls "$work/tarballs"/holdfast-"$1"-*.tgz; }
# npm "overrides" that give these packages from their tarballs: what the registry answers once
# they are published (an app that does not install one still has npm look it up).
unpublished() {
  local lib sep=''
  printf '{'
  for lib in "$@"; do printf '%s\n    "@holdfast/%s": "file:%s"' "$sep" "$lib" "$(tarball "$lib")"; sep=','; done
  printf '\n  }'
}

# better-sqlite3's install looks for a prebuilt binary on GitHub, which this machine cannot reach,
# then compiles one from source: about 100 s for each of the two apps below. The apps take the
# version the repository's lockfile holds, and the binary its install built for that version, as
# prebuild-install's local prebuild (its rc file, found from the package's directory upwards): what
# a user's install downloads, from here.
sqlite_version="$(node -p "require('$repo/node_modules/better-sqlite3/package.json').version")"
mkdir -p "$work/prebuilds"
tar -czf "$work/prebuilds/better-sqlite3-v$sqlite_version-node-v$(node -p process.versions.modules)-$(node -p 'process.platform + "-" + process.arch').tar.gz" \
  -C "$repo/node_modules/better-sqlite3" build/Release/better_sqlite3.node
echo "local-prebuilds=$work/prebuilds" >"$work/.prebuild-installrc"

step "a fresh Nest application"
app="$work/app"
mkdir -p "$app"
cp -r "$repo/test/package/app/src" "$repo/test/package/app/tsconfig.json" "$app/"
optional_peers() {
  if [ -n "${HOLDFAST_PACKAGE_OPTIONAL_PEERS:-}" ]; then
    printf '\n    "@nestjs/terminus": "^11.0.0",\n    "@opentelemetry/api": "^1.9.0",'
  fi
}
cat >"$app/package.json" <<JSON
{
  "name": "holdfast-package-test-app",
  "private": true,
  "version": "1.0.0",
  "allowScripts": { "better-sqlite3": true },
  "dependencies": {
    "@holdfast/cli": "file:$(tarball cli)",
    "@holdfast/core": "file:$(tarball core)",
    "@holdfast/dashboard": "file:$(tarball dashboard)",
    "@holdfast/failover": "file:$(tarball failover)",
    "@holdfast/inbox": "file:$(tarball inbox)",
    "@holdfast/locker": "file:$(tarball locker)",
    "@holdfast/simba": "file:$(tarball simba)",
    "@nestjs/common": "^11.0.0",
    "@nestjs/core": "^11.0.0",
    "@nestjs/platform-express": "^11.0.0",
    "@nestjs/schedule": "^6.0.0",
    "@nestjs/typeorm": "^11.0.0",$(optional_peers)
    "better-sqlite3": "$sqlite_version",
    "reflect-metadata": "^0.2.0",
    "rxjs": "^7.8.0",
    "typeorm": "^1.0.0"
  },
  "devDependencies": {
    "@holdfast/testing": "file:$(tarball testing)",
    "@types/node": "^20.0.0",
    "ts-node": "^10.9.0",
    "typescript": "~5.9.0"
  }
}
JSON
cd "$app"
npm install --no-audit --no-fund --prefer-offline --loglevel=error

failures=()
# Runs one stage; a failing stage is recorded and the next ones still run, so one run names
# everything that breaks.
stage() {
  local name="$1"
  shift
  step "$name"
  if "$@"; then return 0; fi
  failures+=("$name")
  echo "FAILED: $name"
  return 1
}

check_install() {
  node -e "
    const fs = require('node:fs'), path = require('node:path');
    const problems = [];
    const asked = Object.keys(require('./package.json').dependencies);
    for (const peer of ['@nestjs/terminus', '@opentelemetry/api', 'nestjs-cls'].filter((p) => !asked.includes(p))) {
      if (fs.existsSync(path.join('node_modules', peer))) problems.push(peer + ' was installed though the app does not ask for it');
    }
    for (const lib of ['core', 'simba', 'failover', 'locker', 'inbox', 'cli', 'dashboard', 'testing']) {
      const dir = path.join('node_modules/@holdfast', lib);
      if (!fs.existsSync(path.join(dir, 'LICENSE'))) problems.push('@holdfast/' + lib + ' has no LICENSE');
      const nested = path.join(dir, 'node_modules');
      if (fs.existsSync(nested)) problems.push('@holdfast/' + lib + ' has its own node_modules: ' + fs.readdirSync(nested).join(', '));
      // Every source map must point at a file that is in the package.
      const maps = fs.readdirSync(path.join(dir, 'dist'), { recursive: true }).filter((f) => f.endsWith('.js.map'));
      for (const map of maps) {
        const file = path.join(dir, 'dist', map);
        for (const source of JSON.parse(fs.readFileSync(file, 'utf8')).sources) {
          if (!fs.existsSync(path.resolve(path.dirname(file), source))) problems.push(file + ' points at missing ' + source);
        }
      }
      if (!maps.length) problems.push('@holdfast/' + lib + ' ships no source maps');
    }
    const core = require('@holdfast/core'), testing = require('@holdfast/testing');
    if ('describeEachDatabase' in core || 'forkTs' in core) problems.push('@holdfast/core main entry carries the test kit');
    try { require.resolve('@holdfast/core/testing'); problems.push('@holdfast/core still exports ./testing'); } catch {}
    if (typeof testing.describeEachDatabase !== 'function' || typeof testing.TcpProxy !== 'function') problems.push('@holdfast/testing lacks describeEachDatabase or TcpProxy');
    const kit = require('@holdfast/core/kit');
    if ('SqlClient' in core) problems.push('@holdfast/core main entry carries the module kit');
    if (typeof kit.SqlClient !== 'function' || kit.HoldfastError !== core.HoldfastError) problems.push('@holdfast/core/kit lacks the module kit or has errors of its own');
    if (problems.length) { console.error(problems.join('\n')); process.exit(1); }
    console.log('no optional peer the app did not ask for, LICENSE in each package, every source map resolves, test kit only in @holdfast/testing, module kit only at @holdfast/core/kit');
  "
}

typeorm_version() { node -p "JSON.parse(require('fs').readFileSync('node_modules/typeorm/package.json', 'utf8')).version"; }

# tsc --strict with the settings `nest new` generates (skipLibCheck among them).
compile() { rm -rf dist && npx tsc -p tsconfig.json --strict --skipLibCheck; }
# A stricter user checks library declarations too: they must not need an optional peer's types.
declarations() { npx tsc -p tsconfig.json --strict --noEmit --skipLibCheck false; }
migrate() {
  npx holdfast ddl --dialect postgres | grep -q 'CREATE TABLE simba_mutex' &&
    rm -f app.sqlite* && DATABASE_URL=sqlite:app.sqlite npx holdfast migrate
}
boot() { APP_SQLITE_FILE=app.sqlite node --enable-source-maps dist/main.js; }
fork_worker() { node dist/fork-check.js; }
# The production packages carry no test kit: nothing under a testing/ folder, no ts-register.js.
no_kit_in_production() {
  local lib found=0
  for lib in core simba failover locker inbox cli dashboard; do
    if tar -tzf "$(tarball "$lib")" | grep -E '(^|/)testing/|ts-register\.js$'; then
      echo "@holdfast/$lib's tarball carries the test kit (above)"
      found=1
    fi
  done
  tar -tzf "$(tarball testing)" | grep -x 'package/dist/index.js' >/dev/null || { echo '@holdfast/testing packs no dist/index.js'; found=1; }
  tar -tzf "$(tarball testing)" | grep -x 'package/ts-register.js' >/dev/null || { echo '@holdfast/testing packs no ts-register.js'; found=1; }
  [ "$found" = 0 ] && echo 'no testing/ files and no ts-register.js in the production tarballs; @holdfast/testing packs dist and ts-register.js'
}

run_app() {
  local tag="typeorm $(typeorm_version)"
  stage "tsc --strict ($tag)" compile || return 0
  stage "holdfast ddl and holdfast migrate from the packed CLI ($tag)" migrate || return 0
  stage "boot on SQLite, each module once ($tag)" boot || true
}

stage "what the install holds" check_install || true
stage "the production tarballs carry no test kit" no_kit_in_production || true
stage "declarations compile without optional peers (skipLibCheck false)" declarations || true
run_app
stage "@holdfast/testing forks a TypeScript worker with the app's own loader" fork_worker || true

step "the same application on TypeORM 0.3.x"
npm install --no-audit --no-fund --prefer-offline --loglevel=error typeorm@0.3
run_app

step "an application with only @holdfast/core, @holdfast/inbox and @holdfast/dashboard installed"
partial="$work/app-partial"
mkdir -p "$partial"
cp -r "$repo/test/package/app-partial/src" "$repo/test/package/app/tsconfig.json" "$partial/"
cat >"$partial/package.json" <<JSON
{
  "name": "holdfast-package-test-partial-app",
  "private": true,
  "version": "1.0.0",
  "allowScripts": { "better-sqlite3": true },
  "dependencies": {
    "@holdfast/core": "file:$(tarball core)",
    "@holdfast/dashboard": "file:$(tarball dashboard)",
    "@holdfast/inbox": "file:$(tarball inbox)",
    "@nestjs/common": "^11.0.0",
    "@nestjs/core": "^11.0.0",
    "@nestjs/platform-express": "^11.0.0",
    "@nestjs/typeorm": "^11.0.0",
    "better-sqlite3": "$sqlite_version",
    "reflect-metadata": "^0.2.0",
    "rxjs": "^7.8.0",
    "typeorm": "^1.0.0"
  },
  "devDependencies": {
    "@types/node": "^20.0.0",
    "typescript": "~5.9.0"
  },
  "overrides": $(unpublished simba failover locker)
}
JSON
# A plain npm install, as a user runs it (no --legacy-peer-deps). The dashboard and the inbox both
# take @holdfast/simba as an optional peer with a range; npm checks that range against the
# registry's versions even though it installs none, and before publication the registry has none
# (ERESOLVE, "Found: @holdfast/simba@undefined"): the overrides answer for it from the tarballs, as
# the registry will. The app checks that the optional peers left out stay out.
partial_app() {
  (cd "$partial" && npm install --no-audit --no-fund --prefer-offline --loglevel=error &&
    npx tsc -p tsconfig.json --strict --skipLibCheck false && node --enable-source-maps dist/main.js)
}
stage "the dashboard with only the inbox installed (optional peers left out)" partial_app || true

step "the CLI installed alone, as npx or npm install @holdfast/cli in an empty directory does"
alone="$work/cli-alone"
mkdir -p "$alone"
cat >"$alone/package.json" <<JSON
{
  "name": "holdfast-package-test-cli-alone",
  "private": true,
  "version": "1.0.0",
  "overrides": $(unpublished core simba failover locker inbox)
}
JSON
# The modules the CLI loads take Nest as peers (^11 || ^12); alone, npm gave them Nest 12, which
# needs Node 22: EBADENGINE on Node 20, which Holdfast supports. The CLI runs on Nest 11 then.
cli_alone() {
  (cd "$alone" && npm install --no-audit --no-fund --prefer-offline "$(tarball cli)" >install.log 2>&1) ||
    { cat "$alone/install.log"; return 1; }
  if grep -q EBADENGINE "$alone/install.log"; then cat "$alone/install.log"; return 1; fi
  (cd "$alone" && node -e "
    const v = require('@nestjs/common/package.json').version;
    if (Number(process.versions.node.split('.')[0]) < 22 && !v.startsWith('11.')) { console.error('@nestjs/common ' + v + ' on Node ' + process.version); process.exit(1); }
    console.log('@nestjs/common ' + v + ' on Node ' + process.version + ', no EBADENGINE');
  " && npx holdfast --version && npx holdfast ddl --dialect sqlite | grep -q 'CREATE TABLE simba_mutex')
}
stage "the CLI alone installs without EBADENGINE and runs" cli_alone || true

if [ ${#failures[@]} -gt 0 ]; then
  printf '\npackage test FAILED: %s\n' "$(IFS=';'; echo "${failures[*]}")"
  exit 1
fi
printf '\npackage test passed\n'
