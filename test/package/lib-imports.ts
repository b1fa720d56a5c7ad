import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';

export const LIBS = ['core', 'simba', 'failover', 'locker', 'inbox', 'cli', 'dashboard', 'testing'] as const;
export type Lib = (typeof LIBS)[number];
export const ROOT = join(__dirname, '..', '..');

export interface ImportSite {
  file: string;
  line: number;
  specifier: string;
  /** The npm package the specifier belongs to (`@scope/name` or `name`). */
  pkg: string;
  /** `import type …`: erased from the JavaScript. */
  typeOnly: boolean;
}

function filesUnder(dir: string, suffix: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(suffix) && !e.name.endsWith('.spec.ts'))
    .map((e) => join(e.parentPath, e.name));
}

export function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:'))
    return undefined;
  const parts = specifier.split('/');
  const pkg = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  return builtinModules.includes(pkg) ? undefined : pkg;
}

function sites(files: string[], pattern: RegExp): ImportSite[] {
  const found: ImportSite[] = [];
  for (const file of files) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((text, i) => {
        if (/^\s*(\*|\/\/|\/\*)/.test(text)) return; // comments and doc examples
        for (const m of text.matchAll(pattern)) {
          const pkg = packageOf(m[1]);
          const typeOnly = /^\s*(import|export)\s+type\s/.test(text);
          if (pkg) found.push({ file: relative(ROOT, file), line: i + 1, specifier: m[1], pkg, typeOnly });
        }
      });
  }
  return found;
}

/** Every package a lib's sources name (imports, re-exports, require and require.resolve, dynamic import). */
export function sourceImports(lib: Lib): ImportSite[] {
  return sites(
    filesUnder(join(ROOT, 'libs', lib, 'src'), '.ts'),
    /(?:from\s+|require(?:\.resolve)?\(\s*|import\(\s*)['"]([^'"]+)['"]/g,
  );
}

/**
 * The packages a built lib loads when it is first required: tsc emits those as `require()` at
 * the start of a line; a lazy require sits indented inside a function.
 */
export function loadTimeRequires(lib: Lib): ImportSite[] {
  return sites(
    filesUnder(join(ROOT, 'libs', lib, 'dist'), '.js'),
    /^(?:(?:const|var|let) [\w$]+ = (?:__import(?:Default|Star)\()?)?require\(["']([^"']+)["']\)/g,
  );
}

export interface Manifest {
  name: string;
  license?: string;
  repository?: { url?: string; directory?: string };
  engines?: Record<string, string>;
  exports?: Record<string, unknown>;
  typesVersions?: Record<string, Record<string, string[]>>;
  bin?: Record<string, string>;
  files?: string[];
  scripts?: Record<string, string>;
  publishConfig?: { access?: string };
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

export function manifest(lib: Lib): Manifest {
  return JSON.parse(readFileSync(join(ROOT, 'libs', lib, 'package.json'), 'utf8')) as Manifest;
}

/** Optional peers: a lib must work when the application has not installed them. */
export function optionalPeers(lib: Lib): string[] {
  const meta = manifest(lib).peerDependenciesMeta ?? {};
  return Object.keys(meta).filter((name) => meta[name].optional);
}
