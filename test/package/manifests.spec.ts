/**
 * What each lib's package.json promises a user who installs it: every package its sources load
 * is declared, nothing declared goes unused, peers have bounded ranges, optional peers are marked
 * optional and never bundled, and the package is publishable (license, exports, prepack).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LIBS, ROOT, manifest, optionalPeers, sourceImports } from './lib-imports';

/** Packages that must be peers: one copy per application, or the app's own choice of version. */
const ALWAYS_PEERS = [
  '@nestjs/common',
  '@nestjs/core',
  '@nestjs/typeorm',
  'typeorm',
  'reflect-metadata',
  'rxjs',
];
const OPTIONAL_EVERYWHERE_USED = ['@opentelemetry/api', '@nestjs/terminus', 'nestjs-cls'];
/** The Nest line the CLI runs on when installed alone (see below). */
const CLI_NEST_LINE = {
  '@nestjs/common': '^11.0.0',
  '@nestjs/core': '^11.0.0',
  '@nestjs/schedule': '^6.0.0',
  '@nestjs/typeorm': '^11.0.0',
};

describe.each(LIBS)('@holdfast/%s package.json', (lib) => {
  const pkg = manifest(lib);
  const deps = pkg.dependencies ?? {};
  const peers = pkg.peerDependencies ?? {};
  const imports = sourceImports(lib);
  // A package may load itself by name (Node resolves that through its own `exports`).
  const used = new Set(imports.map((s) => s.pkg).filter((name) => name !== pkg.name));
  // Type-only imports are erased from the JavaScript (and must not reach the declarations).
  const loaded = new Set(imports.filter((s) => !s.typeOnly && s.pkg !== pkg.name).map((s) => s.pkg));

  it('declares every package its sources load', () => {
    // An optional peer may be declared in peerDependenciesMeta alone (any version; see below).
    const undeclared = [...loaded].filter(
      (name) => !(name in deps) && !(name in peers) && !optionalPeers(lib).includes(name),
    );
    expect(undeclared).toEqual([]);
  });

  it('has no dependency that its sources do not load', () => {
    const unused = Object.keys(deps).filter((name) => !used.has(name));
    expect(unused).toEqual(lib === 'cli' ? Object.keys(CLI_NEST_LINE) : []);
  });

  it('takes the application-wide packages as peers, never as its own copy', () => {
    const own = lib === 'cli' ? Object.keys(CLI_NEST_LINE) : [];
    for (const name of [...ALWAYS_PEERS, ...OPTIONAL_EVERYWHERE_USED].filter((n) => !own.includes(n))) {
      expect(deps[name]).toBeUndefined();
    }
    // The CLI is no Nest module: it asks for what its own sources load (typeorm, reflect-metadata).
    const required = lib === 'cli' ? ALWAYS_PEERS.filter((name) => loaded.has(name)) : ALWAYS_PEERS;
    for (const name of required) expect(peers[name]).toBeDefined();
    if (lib === 'cli') {
      expect(Object.keys(peers).filter((name) => name.startsWith('@nestjs/') || name === 'rxjs')).toEqual([]);
      // The modules it loads take Nest as peers (^11 || ^12): installed alone, npm would give them
      // Nest 12, which needs Node 22 (EBADENGINE on Node 20). Depending on the Nest 11 line makes
      // npm pick that one for them; in an application on Nest 12 the modules use the
      // application's copy (this one stays nested under the CLI, unused).
      for (const [name, range] of Object.entries(CLI_NEST_LINE))
        expect({ name, range: deps[name] }).toEqual({ name, range });
    }
  });

  it('names in peerDependenciesMeta only peers it gives a range in peerDependencies', () => {
    expect(Object.keys(pkg.peerDependenciesMeta ?? {}).filter((name) => !(name in peers))).toEqual([]);
  });

  it('gives @holdfast/simba, an optional peer of the dashboard and the inbox, one range in both', () => {
    // An application without simba (core, inbox and dashboard) installs with a plain npm install
    // (test/package/run.sh). npm checks an optional peer's range against the registry's versions
    // even when it installs none: before publication run.sh points it at the packed tarballs.
    if (lib === 'dashboard' || lib === 'inbox') expect(peers['@holdfast/simba']).toBe('0.1.0');
  });

  it('marks the peers an application may leave out as optional', () => {
    const expected = OPTIONAL_EVERYWHERE_USED.filter((name) => used.has(name));
    // The inbox joins @nestjs-cls/transactional's transaction when the application uses it.
    if (lib === 'inbox') expected.push('@holdfast/simba', '@nestjs-cls/transactional');
    // Core registers the libs' timers in the app's SchedulerRegistry when ScheduleModule is there.
    // Failover and the locker never import it: their timers find the registry through core.
    if (lib === 'core' || lib === 'failover' || lib === 'locker') expected.push('@nestjs/schedule');
    // The shared-file locker's mode 'os' takes its fcntl lock through the native os-lock, loaded
    // on first use only: an application on the database lockers never needs a compiler for it.
    if (lib === 'locker') expected.push('os-lock');
    // The CLI opens DATABASE_URL with the application's own driver.
    if (lib === 'cli') expected.push('better-sqlite3', 'mysql2', 'pg');
    // The dashboard shows the modules the application installed, and loads only those.
    if (lib === 'dashboard') {
      expected.push('@holdfast/failover', '@holdfast/inbox', '@holdfast/locker', '@holdfast/simba');
    }
    expect(optionalPeers(lib).sort()).toEqual(expected.sort());
  });

  it('gives every peer a bounded range', () => {
    for (const [name, range] of Object.entries(peers)) {
      for (const part of range.split('||').map((r) => r.trim())) {
        const bounded = /^[\^~]?\d+\.\d+\.\d+$/.test(part) || /^>=?\s*\S+\s+<\s*\S+$/.test(part);
        expect({ name, part, bounded }).toEqual({ name, part, bounded: true });
      }
    }
    expect(peers.typeorm).toBe('^0.3.20 || ^1.0.0');
  });

  it('is publishable: license, repository, engines, public access, exports, prepack build', () => {
    expect(pkg.license).toBe('MIT');
    expect(existsSync(join(ROOT, 'libs', lib, 'LICENSE'))).toBe(true);
    expect(pkg.repository?.directory).toBe(`libs/${lib}`);
    expect(pkg.engines?.node).toBeDefined();
    expect(pkg.publishConfig?.access).toBe('public');
    expect(pkg.scripts?.prepack).toMatch(/tsc -b/);
    expect(pkg.exports?.['.']).toEqual({ types: './dist/index.d.ts', default: './dist/index.js' });
    // Source maps point at src/: ship it.
    expect(pkg.files).toEqual(expect.arrayContaining(['dist', 'src']));
  });
});

it('@holdfast/cli ships the holdfast bin', () => {
  expect(manifest('cli').bin).toEqual({ holdfast: 'bin/holdfast.js' });
  expect(manifest('cli').files).toContain('bin');
  expect(readFileSync(join(ROOT, 'libs/cli/bin/holdfast.js'), 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/);
});

it('@holdfast/core/kit is its own entry (the module kit), and the main entry holds the errors only', () => {
  const core = manifest('core');
  expect(core.exports?.['./kit']).toEqual({ types: './dist/kit/index.d.ts', default: './dist/kit/index.js' });
  expect(core.typesVersions?.['*']?.kit).toEqual(['dist/kit/index.d.ts']);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const main = require(join(ROOT, 'libs/core/src')) as Record<string, unknown>;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const kit = require(join(ROOT, 'libs/core/src/kit')) as Record<string, unknown>;
  for (const name of ['SqlClient', 'HoldfastDatabase', 'NamedInstances', 'SchemaManager', 'parseDuration']) {
    expect(main[name]).toBeUndefined();
    expect(typeof kit[name]).toBe('function');
  }
  // The errors are the same classes in both.
  for (const [name, value] of Object.entries(main)) expect(kit[name]).toBe(value);
  expect(typeof main.HoldfastError).toBe('function');
});

it('the test kit is its own package, @holdfast/testing; @holdfast/core does not carry it', () => {
  const core = manifest('core');
  expect(core.exports?.['./testing']).toBeUndefined();
  expect(core.typesVersions?.['*']?.testing).toBeUndefined();
  expect(core.files).not.toContain('ts-register.js');
  expect(existsSync(join(ROOT, 'libs/core/src/testing'))).toBe(false);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const main = require(join(ROOT, 'libs/core/src')) as Record<string, unknown>;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const kit = require(join(ROOT, 'libs/core/src/kit')) as Record<string, unknown>;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const testing = require(join(ROOT, 'libs/testing/src')) as Record<string, unknown>;
  for (const name of ['describeEachDatabase', 'forkTs', 'TcpProxy', 'createTestDataSource']) {
    expect(main[name]).toBeUndefined();
    expect(kit[name]).toBeUndefined();
    expect(typeof testing[name]).toBe('function');
  }
});
