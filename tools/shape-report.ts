// Prints the figures of the code's shape that issue #44 tracks, for libs/*/src:
// the largest files and functions, functions over 6 parameters, the members of SqlDialect, import
// circles (type imports counted), the runtime exports of each lib's entries, where SQL is run
// in a shape other than a Statement handed to SqlClient, and context bags over 6 fields.
//
// A context bag is (1) an interface or object type alias whose name ends in Context, Deps or Parts,
// or (2) the type of a constructor's only parameter when it is an object type (an interface, a type
// literal or alias of one; not a class, function or primitive): a constructor given its
// dependencies as one object. Not a bag: a type named *Options, which is a user's options (a
// module's or a test kit's, documented field by field), not dependencies handed around; a
// *Context/*Deps/*Parts type is a bag whatever it is given to. Its fields are the type's
// properties, inherited ones included.
//
//   node -r ./tools/register.js tools/shape-report.ts [--json]
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

const root = path.resolve(__dirname, '..');
const libsDir = path.join(root, 'libs');
const libs = fs.readdirSync(libsDir).filter((l) => fs.existsSync(path.join(libsDir, l, 'src', 'index.ts')));

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(p));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

const files = libs.flatMap((l) => sourceFiles(path.join(libsDir, l, 'src')));
const rel = (p: string) => path.relative(root, p);
const config = ts.getParsedCommandLineOfConfigFile(
  path.join(root, 'tsconfig.json'),
  {},
  {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: () => undefined,
  },
)!;
const program = ts.createProgram(files, { ...config.options, noEmit: true });
const checker = program.getTypeChecker();

interface FunctionFigure {
  file: string;
  name: string;
  lines: number;
  params: number;
}

interface BagFigure {
  file: string;
  name: string;
  fields: number;
}

const fileLines: Array<{ file: string; lines: number }> = [];
const bags = new Map<string, BagFigure>();
const bagName = /(Context|Deps|Parts)$/;
/** A constructor's only parameter of a type so named is a user's options, not a bag. */
const userOptions = /Options$/;
const fileSet = new Set(files.map((f) => path.resolve(f)));

/** The fields of `type` when it is a bag's shape (an object type, not a class instance or a function). */
function bagFields(type: ts.Type): number | undefined {
  if (!(type.flags & ts.TypeFlags.Object)) return undefined;
  const symbol = type.aliasSymbol ?? type.getSymbol();
  if (symbol && symbol.flags & ts.SymbolFlags.Class) return undefined;
  if (type.getCallSignatures().length || type.getConstructSignatures().length) return undefined;
  return checker.getPropertiesOfType(type).length;
}

function noteBag(sf: ts.SourceFile, node: ts.Node, name: string, type: ts.Type): void {
  if (!fileSet.has(path.resolve(sf.fileName))) return; // declared outside libs/*/src (Node's Buffer)
  const fields = bagFields(type);
  const where = `${rel(sf.fileName)}:${lineOf(sf, node.getStart(sf))}`;
  if (fields !== undefined && !bags.has(name + '@' + where))
    bags.set(name + '@' + where, { file: where, name, fields });
}
const functions: FunctionFigure[] = [];
const edges = new Map<string, Set<string>>();
const odd: Record<string, string[]> = {
  'query/execute given (x.sql, x.params) by hand': [],
  'placeholder(n) outside a binder': [],
  'literal $n placeholder in SQL text': [],
  'TypeORM query builder': [],
  'raw driver access (driver.master / driver.pool / databaseConnection)': [],
};

function lineOf(sf: ts.SourceFile, pos: number): number {
  return sf.getLineAndCharacterOfPosition(pos).line + 1;
}

function functionName(node: ts.Node): string {
  if (ts.isConstructorDeclaration(node)) return `${className(node)}.constructor`;
  if ((ts.isMethodDeclaration(node) || ts.isGetAccessor(node)) && node.name)
    return `${className(node)}.${node.name.getText()}`;
  if (ts.isFunctionDeclaration(node) && node.name) return node.name.text;
  if ((ts.isArrowFunction(node) || ts.isFunctionExpression(node)) && ts.isVariableDeclaration(node.parent))
    return node.parent.name.getText();
  return '';
}

function className(node: ts.Node): string {
  const parent = node.parent;
  return (ts.isClassDeclaration(parent) || ts.isClassExpression(parent)) && parent.name
    ? parent.name.text
    : '(class)';
}

for (const file of files) {
  const sf = program.getSourceFile(file)!;
  const text = sf.getFullText();
  fileLines.push({ file: rel(file), lines: text.split('\n').length - (text.endsWith('\n') ? 1 : 0) });
  const imports = new Set<string>();
  edges.set(file, imports);
  const visit = (node: ts.Node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier) &&
      node.moduleSpecifier.text.startsWith('.')
    ) {
      const resolved = ts.resolveModuleName(node.moduleSpecifier.text, file, config.options, ts.sys)
        .resolvedModule?.resolvedFileName;
      if (resolved && !resolved.endsWith('.d.ts')) imports.add(path.resolve(resolved));
    }
    if (
      ts.isFunctionDeclaration(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isConstructorDeclaration(node) ||
      ts.isArrowFunction(node) ||
      ts.isFunctionExpression(node) ||
      ts.isGetAccessor(node)
    ) {
      const name = functionName(node);
      if (name && (node as ts.FunctionLikeDeclaration).body) {
        functions.push({
          file: rel(file),
          name,
          lines: lineOf(sf, node.getEnd()) - lineOf(sf, node.getStart(sf)) + 1,
          params: (node as ts.FunctionLikeDeclaration).parameters.length,
        });
      }
    }
    if ((ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) && bagName.test(node.name.text))
      noteBag(sf, node, node.name.text, checker.getTypeAtLocation(node.name));
    if (ts.isConstructorDeclaration(node) && node.parameters.length === 1) {
      const [param] = node.parameters;
      const type = checker.getTypeAtLocation(param);
      const named = type.aliasSymbol?.name ?? type.getSymbol()?.name;
      const label = named && named !== '__type' && named !== '__object' ? named : '(type literal)';
      const decl = (type.aliasSymbol ?? type.getSymbol())?.declarations?.[0];
      // A user's options are not a bag (see the header). A named type is counted once, where it is
      // declared (not at each constructor).
      if (!userOptions.test(label)) {
        if (decl && label !== '(type literal)') noteBag(decl.getSourceFile(), decl, label, type);
        else noteBag(sf, param, `${className(node)}.constructor ${label}`, type);
      }
    }
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const method = node.expression.name.text;
      const where = `${rel(file)}:${lineOf(sf, node.getStart(sf))}`;
      const [first, second] = node.arguments;
      if (
        (method === 'query' || method === 'execute') &&
        first &&
        second &&
        ts.isPropertyAccessExpression(first) &&
        first.name.text === 'sql' &&
        ts.isPropertyAccessExpression(second) &&
        second.name.text === 'params'
      )
        odd['query/execute given (x.sql, x.params) by hand'].push(where);
      if (
        method === 'placeholder' &&
        !rel(file).startsWith('libs/core/src/dialect/') &&
        !/statement(-template)?\.ts$/.test(file)
      )
        odd['placeholder(n) outside a binder'].push(where);
      if (method === 'createQueryBuilder') odd['TypeORM query builder'].push(where);
    }
    if (
      (ts.isStringLiteral(node) ||
        ts.isNoSubstitutionTemplateLiteral(node) ||
        ts.isTemplateHead(node) ||
        ts.isTemplateMiddle(node) ||
        ts.isTemplateTail(node)) &&
      /\$[1-9]\b/.test(node.text) &&
      /\b(SELECT|UPDATE|INSERT|DELETE|NOTIFY|LISTEN|SET)\b/i.test(node.text) &&
      !rel(file).startsWith('libs/core/src/dialect/')
    )
      odd['literal $n placeholder in SQL text'].push(`${rel(file)}:${lineOf(sf, node.getStart(sf))}`);
    if (
      ts.isPropertyAccessExpression(node) &&
      ['master', 'pool', 'databaseConnection', 'databaseConnectionPromise'].includes(node.name.text) &&
      /driver|runner/i.test(node.expression.getText(sf))
    )
      odd['raw driver access (driver.master / driver.pool / databaseConnection)'].push(
        `${rel(file)}:${lineOf(sf, node.getStart(sf))}`,
      );
    ts.forEachChild(node, visit);
  };
  visit(sf);
}

// Import circles: strongly connected components of the relative-import graph (type imports included).
function circles(): string[][] {
  let index = 0;
  const stack: string[] = [];
  const on = new Set<string>();
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const out: string[][] = [];
  const strong = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!edges.has(w)) continue;
      if (!idx.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        component.push(rel(w));
      } while (w !== v);
      if (component.length > 1 || edges.get(v)?.has(v)) out.push(component.sort());
    }
  };
  for (const v of edges.keys()) if (!idx.has(v)) strong(v);
  return out;
}

function runtimeExports(entry: string): number | undefined {
  const sf = program.getSourceFile(entry);
  if (!sf) return undefined;
  const symbol = checker.getSymbolAtLocation(sf);
  if (!symbol) return 0;
  return checker.getExportsOfModule(symbol).filter((s) => {
    // `export { type X }` and `export type { X }` are erased from the JavaScript, a class's too.
    if (s.declarations?.some((d) => ts.isTypeOnlyImportOrExportDeclaration(d))) return false;
    const target = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
    return (target.flags & ts.SymbolFlags.Value) !== 0;
  }).length;
}

function dialectMembers(): number | undefined {
  const file = program.getSourceFile(path.join(libsDir, 'core/src/dialect/sql-dialect.ts'));
  let count: number | undefined;
  file?.forEachChild((node) => {
    if (ts.isInterfaceDeclaration(node) && node.name.text === 'SqlDialect') count = node.members.length;
  });
  return count;
}

const report = {
  sourceLines: fileLines.reduce((n, f) => n + f.lines, 0),
  largestFiles: [...fileLines].sort((a, b) => b.lines - a.lines).slice(0, 12),
  largestFunctions: [...functions].sort((a, b) => b.lines - a.lines).slice(0, 12),
  functionsOver60Lines: functions.filter((f) => f.lines > 60).length,
  overSixParameters: functions.filter((f) => f.params > 6).sort((a, b) => b.params - a.params),
  sqlDialectMembers: dialectMembers(),
  importCircles: circles(),
  runtimeExports: Object.fromEntries(
    libs.flatMap((l) =>
      ['index', 'internal/index', 'internal', 'kit/index', 'status/index'].flatMap((entry) => {
        const file = path.join(libsDir, l, 'src', `${entry}.ts`);
        const n = fs.existsSync(file) ? runtimeExports(file) : undefined;
        return n === undefined
          ? []
          : [[`@holdfast/${l}${entry === 'index' ? '' : '/' + entry.replace(/\/index$/, '')}`, n]];
      }),
    ),
  ),
  contextBagsOver6Fields: [...bags.values()].filter((b) => b.fields > 6).sort((a, b) => b.fields - a.fields),
  otherStatementShapes: Object.fromEntries(
    Object.entries(odd).map(([k, v]) => [k, { count: v.length, where: v }]),
  ),
};

if (process.argv.includes('--json')) {
  console.log(JSON.stringify(report, null, 2));
} else {
  console.log(`libs/*/src: ${files.length} files, ${report.sourceLines} lines`);
  console.log('\nlargest files:');
  for (const f of report.largestFiles) console.log(`  ${String(f.lines).padStart(5)}  ${f.file}`);
  console.log(`\nlargest functions (${report.functionsOver60Lines} over 60 lines):`);
  for (const f of report.largestFunctions)
    console.log(`  ${String(f.lines).padStart(5)}  ${f.name}  (${f.file})`);
  console.log(`\nfunctions over 6 parameters: ${report.overSixParameters.length}`);
  for (const f of report.overSixParameters) console.log(`  ${f.params}  ${f.name}  (${f.file})`);
  const bagsByLib = new Map<string, number>();
  for (const b of report.contextBagsOver6Fields) {
    const lib = b.file.split('/')[1];
    bagsByLib.set(lib, (bagsByLib.get(lib) ?? 0) + 1);
  }
  const perLib = libs.map((l) => `${l} ${bagsByLib.get(l) ?? 0}`).join(', ');
  console.log(`\ncontext bags over 6 fields: ${report.contextBagsOver6Fields.length} (${perLib})`);
  for (const b of report.contextBagsOver6Fields) console.log(`  ${b.fields}  ${b.name}  (${b.file})`);
  console.log(`\nSqlDialect members: ${report.sqlDialectMembers}`);
  console.log(`\nimport circles (type imports counted): ${report.importCircles.length}`);
  for (const c of report.importCircles) console.log(`  ${c.length} files: ${c.join(', ')}`);
  console.log('\nruntime exports per entry:');
  for (const [k, v] of Object.entries(report.runtimeExports)) console.log(`  ${String(v).padStart(4)}  ${k}`);
  console.log('\nSQL run in another shape than a Statement:');
  for (const [k, v] of Object.entries(report.otherStatementShapes)) {
    console.log(`  ${v.count}  ${k}`);
    for (const w of v.where.slice(0, 8)) console.log(`        ${w}`);
    if (v.where.length > 8) console.log(`        … ${v.where.length - 8} more`);
  }
}
