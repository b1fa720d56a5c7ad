#!/usr/bin/env node
/**
 * Adds lockfile entries for optional platform packages of other systems (e.g.
 * @swc/core-darwin-arm64) that this workplace's registry does not serve (it answers 404), so
 * `npm install` cannot record them and `npm ci` then reports the lockfile out of sync. Each entry
 * carries the os/cpu/libc its name states, so npm skips it on other platforms without fetching
 * it. Run after `npm install` changed the lockfile: `node tools/lockfile-platforms.js`.
 */
const fs = require('node:fs');
const path = require('node:path');

const lockPath = path.resolve(process.argv[2] ?? path.join(__dirname, '..', 'package-lock.json'));
const lock = JSON.parse(fs.readFileSync(lockPath, 'utf8'));
const packages = lock.packages;

const OS = [
  'darwin',
  'linux',
  'win32',
  'freebsd',
  'android',
  'openharmony',
  'sunos',
  'aix',
  'netbsd',
  'openbsd',
];
const CPU = ['arm64', 'x64', 'ia32', 'arm', 'ppc64', 's390x', 'riscv64', 'loong64', 'mips64el', 'wasm32'];

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((p) => OS.includes(p));
  const cpu = parts.find((p) => CPU.includes(p));
  if (!os || !cpu) return undefined;
  const libc = parts.some((p) => p.startsWith('musl'))
    ? 'musl'
    : parts.some((p) => p.startsWith('gnu'))
      ? 'glibc'
      : undefined;
  return { os: [os], cpu: [cpu], ...(libc && os === 'linux' ? { libc: [libc] } : {}) };
}

let added = 0;
for (const [location, meta] of Object.entries(packages)) {
  for (const [dep, spec] of Object.entries(meta.optionalDependencies ?? {})) {
    const base = location ? `${location}/node_modules/${dep}` : `node_modules/${dep}`;
    if (packages[base] || packages[`node_modules/${dep}`]) continue;
    const platform = platformOf(dep);
    if (!platform || !/^\d+\.\d+\.\d+/.test(spec)) continue;
    packages[`node_modules/${dep}`] = { version: spec, ...platform, optional: true };
    added++;
  }
}
const sorted = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
lock.packages = sorted;
fs.writeFileSync(lockPath, JSON.stringify(lock, null, 2) + '\n');
console.log(
  `lockfile-platforms: ${added} entries added to ${path.relative(process.cwd(), lockPath) || lockPath}`,
);
