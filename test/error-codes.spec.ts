import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import * as core from '@holdfast/core';
import * as coreKit from '@holdfast/core/kit';
import * as testing from '@holdfast/testing';
import * as failover from '@holdfast/failover';
import * as simba from '@holdfast/simba';
import * as locker from '@holdfast/locker';
import * as inbox from '@holdfast/inbox';
import * as cli from '@holdfast/cli';
import * as dashboard from '@holdfast/dashboard';

/**
 * One error-code scheme, HOLDFAST_<LIB>_<WHAT>, checked against the sources and the README's
 * "Error codes" table. The sources are parsed with the TypeScript compiler (not searched as
 * text): every `new X(...)` and `super(...)` that reaches HoldfastError's constructor is found,
 * and the argument it passes as `code` must be a string literal (or a parameter with a literal
 * default), so that no code escapes the check.
 */

const ROOT = join(__dirname, '..');
const LIBS = ['core', 'failover', 'simba', 'locker', 'inbox', 'cli', 'dashboard', 'testing'] as const;
type Lib = (typeof LIBS)[number];

interface Row {
  code: string;
  className: string;
  lib: Lib;
}

interface ClassInfo {
  lib: Lib;
  file: string;
  parent: string | undefined;
  ctor: ts.ConstructorDeclaration | undefined;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

function parseLibs(): Array<{ lib: Lib; file: string; source: ts.SourceFile }> {
  return LIBS.flatMap((lib) =>
    sourceFiles(join(ROOT, 'libs', lib, 'src')).map((file) => ({
      lib,
      file: relative(ROOT, file),
      source: ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true),
    })),
  );
}

function walk(node: ts.Node, visit: (node: ts.Node) => void): void {
  visit(node);
  node.forEachChild((child) => walk(child, visit));
}

/** What the sources throw: one row per (code, class, lib), and the call sites whose code is not a literal. */
function codesInSources(): { rows: Row[]; unreadable: string[]; classes: Map<string, ClassInfo> } {
  const files = parseLibs();
  const classes = new Map<string, ClassInfo>();
  const unreadable: string[] = [];
  for (const { lib, file, source } of files) {
    walk(source, (node) => {
      if (!ts.isClassDeclaration(node) || !node.name) return;
      const heritage = node.heritageClauses?.find((h) => h.token === ts.SyntaxKind.ExtendsKeyword);
      const parentExpr = heritage?.types[0]?.expression;
      // Classes are resolved by name below, so a name defined twice would make the check guess.
      if (classes.has(node.name.text)) unreadable.push(`${file}: class ${node.name.text} is defined twice`);
      classes.set(node.name.text, {
        lib,
        file,
        parent: parentExpr && ts.isIdentifier(parentExpr) ? parentExpr.text : undefined,
        ctor: node.members.find(ts.isConstructorDeclaration),
      });
    });
  }
  const isHoldfast = (name: string | undefined): boolean => {
    for (let n = name; n !== undefined; n = classes.get(n)?.parent) {
      if (n === 'HoldfastError') return true;
    }
    return false;
  };
  /** The constructor that receives `new name(...)`'s arguments: the nearest one up the chain. */
  const receivingCtor = (name: string | undefined): ts.ConstructorDeclaration | undefined => {
    for (let n = name; n !== undefined; n = classes.get(n)?.parent) {
      const ctor = classes.get(n)?.ctor;
      if (ctor) return ctor;
    }
    return undefined;
  };

  const rows: Row[] = [];
  for (const { lib, file, source } of files) {
    walk(source, (node) => {
      let target: string | undefined;
      let thrown: string | undefined;
      let args: readonly ts.Expression[] = [];
      let ownCtor: ts.ConstructorDeclaration | undefined;
      if (ts.isNewExpression(node) && ts.isIdentifier(node.expression)) {
        target = thrown = node.expression.text;
        args = node.arguments ?? [];
      } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.SuperKeyword) {
        ownCtor = ts.findAncestor(node, ts.isConstructorDeclaration);
        const cls = ownCtor?.parent;
        if (!cls || !ts.isClassDeclaration(cls) || !cls.name) return;
        thrown = cls.name.text;
        target = classes.get(thrown)?.parent;
        args = node.arguments;
      }
      if (!thrown || !isHoldfast(target)) return;
      const ctor = receivingCtor(target);
      const index =
        ctor?.parameters.findIndex((p) => ts.isIdentifier(p.name) && p.name.text === 'code') ?? -1;
      // A constructor without a `code` parameter fixes the code itself: its own super() call is the row.
      if (!ctor || index < 0) return;
      const where = `${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
      let arg: ts.Expression | undefined = args[index];
      // `code` forwarded from this constructor's own parameter: its default is this class's code.
      if (arg && ts.isIdentifier(arg) && ownCtor) {
        const name = arg.text;
        arg = ownCtor.parameters.find((p) => ts.isIdentifier(p.name) && p.name.text === name)?.initializer;
      }
      if (arg === undefined) arg = ctor.parameters[index]?.initializer;
      if (arg && (ts.isStringLiteral(arg) || ts.isNoSubstitutionTemplateLiteral(arg))) {
        rows.push({ code: arg.text, className: thrown, lib });
      } else {
        unreadable.push(`${where}: ${thrown} gets a code that is not a string literal`);
      }
    });
  }
  return { rows: dedupe(rows), unreadable, classes };
}

function dedupe(rows: Row[]): Row[] {
  const seen = new Map(rows.map((r) => [`${r.code}|${r.className}|${r.lib}`, r]));
  return [...seen.values()].sort((a, b) => a.code.localeCompare(b.code));
}

function readmeTable(): Row[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.split(/^## /m).find((s) => s.startsWith('Error codes\n'));
  if (!section) throw new Error('README.md has no "## Error codes" section');
  const rows = section
    .split('\n')
    .map((line) => /^\| `([A-Z0-9_]+)` \| `([A-Za-z0-9_]+)` \| ([a-z]+) \|/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ code: m[1], className: m[2], lib: m[3] as Lib }));
  return dedupe(rows);
}

describe('error codes', () => {
  const { rows, unreadable, classes } = codesInSources();

  it('finds the codes in the sources (the parse works)', () => {
    expect(rows.length).toBeGreaterThan(40);
    expect(rows).toContainEqual({ code: expect.any(String), className: 'MutexLostError', lib: 'simba' });
    expect(rows).toContainEqual({ code: expect.any(String), className: 'LockHeldError', lib: 'locker' });
  });

  it('passes every code as a string literal, from classes with distinct names', () => {
    expect(unreadable).toEqual([]);
  });

  it('names every code HOLDFAST_<LIB>_<WHAT>, the lib being the one that throws it', () => {
    const wrong = rows
      .filter((r) => !new RegExp(`^HOLDFAST_${r.lib.toUpperCase()}_[A-Z0-9]+(_[A-Z0-9]+)*$`).test(r.code))
      .map((r) => `${r.lib}: ${r.className} throws ${r.code}`);
    expect(wrong).toEqual([]);
  });

  it('gives each code to one class only', () => {
    const byCode = new Map<string, string[]>();
    for (const r of rows) byCode.set(r.code, [...(byCode.get(r.code) ?? []), r.className]);
    expect([...byCode].filter(([, names]) => names.length > 1)).toEqual([]);
  });

  it("lists exactly these codes, classes and libs in the README's error-code table", () => {
    expect(readmeTable()).toEqual(rows);
  });

  it('lists every error class a lib exports, or a class derived from it', () => {
    const listed = new Set(rows.map((r) => r.className));
    const derivedListed = (name: string) =>
      [...classes].some(([child]) => listed.has(child) && chainOf(child, classes).includes(name));
    const entries: Record<string, Record<string, unknown>> = {
      core,
      'core/kit': coreKit,
      failover,
      simba,
      locker,
      inbox,
      cli,
      dashboard,
      testing,
    };
    const missing: string[] = [];
    for (const [entry, exports] of Object.entries(entries)) {
      for (const [name, value] of Object.entries(exports)) {
        const isErrorClass =
          typeof value === 'function' &&
          (value === core.HoldfastError || value.prototype instanceof core.HoldfastError);
        if (isErrorClass && !listed.has(name) && !derivedListed(name))
          missing.push(`@holdfast/${entry}: ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

function chainOf(name: string, classes: Map<string, ClassInfo>): string[] {
  const chain: string[] = [];
  for (let n: string | undefined = name; n !== undefined; n = classes.get(n)?.parent) chain.push(n);
  return chain;
}
