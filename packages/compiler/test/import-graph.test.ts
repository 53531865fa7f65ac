import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** True when the declaration brings in at least one runtime value (not `import type`, not only `type` specifiers). */
function importsValue(node: ts.ImportDeclaration | ts.ExportDeclaration): boolean {
  if (ts.isExportDeclaration(node)) {
    if (node.isTypeOnly) return false;
    const clause = node.exportClause;
    return clause === undefined || !ts.isNamedExports(clause) || clause.elements.some((e) => !e.isTypeOnly);
  }
  const clause = node.importClause;
  if (clause === undefined) return true; // a side-effect import
  if (clause.isTypeOnly) return false;
  if (clause.name !== undefined) return true;
  const bindings = clause.namedBindings;
  if (bindings === undefined) return false;
  if (ts.isNamespaceImport(bindings)) return true;
  return bindings.elements.some((e) => !e.isTypeOnly);
}

/** Relative value imports of every file under src/, as src-relative paths (`.js` specifiers mapped to `.ts`). */
function valueImportGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
    const targets: string[] = [];
    for (const statement of source.statements) {
      if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) continue;
      const specifier = statement.moduleSpecifier;
      if (specifier === undefined || !ts.isStringLiteral(specifier) || !specifier.text.startsWith('.')) continue;
      if (!importsValue(statement)) continue;
      targets.push(relative(SRC, resolve(dirname(file), specifier.text.replace(/\.js$/, '.ts'))));
    }
    graph.set(relative(SRC, file), targets);
  }
  return graph;
}

/** Every cycle found by a depth-first walk, each as the path that closes it (first file repeated at the end). */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    path.push(file);
    for (const target of graph.get(file) ?? []) {
      if (state.get(target) === 'open') found.push([...path.slice(path.indexOf(target)), target]);
      else if (!state.has(target)) visit(target);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file);
  return found;
}

describe('compiler import graph', () => {
  it('finds a planted cycle (the check itself works)', () => {
    const planted = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(cycles(planted)).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
  });

  it('reads every src file and resolves its value imports to files that exist', () => {
    const graph = valueImportGraph();
    expect(graph.size).toBeGreaterThan(40);
    expect(graph.get('index.ts')!.length).toBeGreaterThan(10);
    for (const [file, targets] of graph) for (const target of targets) expect(graph.has(target), `${file} imports ${target}`).toBe(true);
  });

  it('has no cycle of value imports under src/ (type-only imports are erased and may point anywhere)', () => {
    expect(cycles(valueImportGraph()).map((cycle) => cycle.join(' -> '))).toEqual([]);
  });
});
