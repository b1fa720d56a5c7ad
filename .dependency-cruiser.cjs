// The import rules of libs/*/src, checked by `npm run lint` (`npm run -s lint:imports` alone).
// dependency-cruiser rather than eslint-plugin-import-x's `no-cycle`: that rule skips every
// `import type` edge, with no option to count it, and issue #44 counts type imports too (a type
// edge still ties the files' meaning together). `tsPreCompilationDeps: true` reads the imports
// before TypeScript drops the type-only ones, so those edges are in the graph.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import circle in a lib, type imports included (issue #44).',
      from: { path: '^libs/[^/]+/src/' },
      to: { circular: true },
    },
    {
      name: 'dialect-writes-sql-only',
      severity: 'error',
      comment:
        "A dialect only writes SQL text: nothing in core's dialect/ runs a statement or reads a live table " +
        '(that is database/ and schema/, which import dialect/, never the other way).',
      from: { path: '^libs/core/src/dialect/' },
      to: { path: '^libs/core/src/(database|schema)/' },
    },
  ],
  options: {
    includeOnly: '^libs/[^/]+/src/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
  },
};
