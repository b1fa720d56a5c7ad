/**
 * Lists every place where a built lib loads one of its optional peers when it is first required
 * (run `npm run build` first). An application that has not installed that peer cannot even load
 * the lib, so each of these must become a lazy load. Exit code 1 when there is any.
 *   node -r ./tools/register.js test/package/optional-peers.ts
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LIBS, ROOT, loadTimeRequires, optionalPeers, type ImportSite } from './lib-imports';

/** The line of the TypeScript source that the built require came from. */
function sourceLine(site: ImportSite): string {
  const file = site.file.replace('/dist/', '/src/').replace(/\.js$/, '.ts');
  try {
    const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
    const i = lines.findIndex((l) => l.includes(`'${site.specifier}'`));
    return i >= 0 ? `${file}:${i + 1}` : file;
  } catch {
    return file;
  }
}

let found = 0;
for (const lib of LIBS) {
  const optional = new Set(optionalPeers(lib));
  for (const site of loadTimeRequires(lib).filter((s) => optional.has(s.pkg))) {
    found++;
    console.log(`@holdfast/${lib}: ${sourceLine(site)} loads optional peer ${site.specifier} at import`);
  }
}
console.log(
  found ? `${found} load-time import(s) of optional peers` : 'no optional peer is loaded at import',
);
process.exit(found ? 1 : 0);
