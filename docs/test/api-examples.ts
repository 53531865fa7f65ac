import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/**
 * The `@example` blocks of every value export (function, class, constant, enum) of each package the API
 * reference documents (typedoc.json `entryPoints`, each package's `src/index.ts`). Every such export must
 * carry one, and each must be a complete program (it imports what it uses from `@hs/*`), because the docs
 * test compiles and runs them: an example a user copies must work as written.
 */

/** One value export and its example. */
export interface ApiExample {
  /** Package name, e.g. `@hs/tensor`. */
  readonly pkg: string;
  /** The exported name. */
  readonly name: string;
  /** The declaring source file, relative to the repository root. */
  readonly source: string;
  /** The TypeScript inside the example's first ```ts fence (the whole example text when unfenced), or null when the export has none. */
  readonly code: string | null;
}

const FENCE = /^```(?:ts|typescript)?[ \t]*\n([\s\S]*?)^```/m;

/**
 * The code of the first `@example` of the declarations' doc comments, read from the comment's raw text (the
 * compiler's JSDoc parser would take an `@hs/...` inside the code for a tag), or null when there is none.
 */
function exampleOf(declarations: readonly ts.Declaration[]): string | null {
  for (const declaration of declarations) {
    for (const doc of ts.getJSDocCommentsAndTags(declaration)) {
      if (!ts.isJSDoc(doc)) continue;
      const text = doc
        .getText()
        .replace(/^\/\*\*/, '')
        .replace(/\*\/$/, '')
        .split('\n')
        .map((line) => line.replace(/^\s*\* ?/, ''))
        .join('\n');
      const at = text.search(/^@example\b/m);
      if (at < 0) continue;
      const example = text.slice(at + '@example'.length);
      return FENCE.exec(example)?.[1] ?? example.split(/^@\w+/m)[0]?.trim() ?? '';
    }
  }
  return null;
}

/** The packages typedoc documents, from typedoc.json, as directories relative to `root`. */
export function documentedPackages(root: string): string[] {
  const config = JSON.parse(readFileSync(join(root, 'typedoc.json'), 'utf8')) as { entryPoints: string[] };
  return config.entryPoints;
}

/** Every value export of the documented packages, in package then name order, with its example. */
export function apiExamples(root: string): ApiExample[] {
  const packages = documentedPackages(root);
  const entries = packages.map((dir) => join(root, dir, 'src', 'index.ts'));
  const program = ts.createProgram(entries, { ...baseOptions(root), noEmit: true });
  const checker = program.getTypeChecker();
  const found: ApiExample[] = [];
  packages.forEach((dir, i) => {
    const pkg = (JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as { name: string }).name;
    const file = program.getSourceFile(entries[i] as string);
    const module = file === undefined ? undefined : checker.getSymbolAtLocation(file);
    if (module === undefined) throw new Error(`${dir}/src/index.ts: not a module the compiler can read`);
    for (const exported of checker.getExportsOfModule(module)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      if ((symbol.flags & ts.SymbolFlags.Value) === 0) continue;
      const declarations = symbol.declarations ?? [];
      const source = declarations[0]?.getSourceFile().fileName;
      found.push({ pkg, name: exported.name, source: source === undefined ? dir : relative(root, source), code: exampleOf(declarations) });
    }
  });
  return found.sort((a, b) => (a.pkg === b.pkg ? a.name.localeCompare(b.name) : a.pkg.localeCompare(b.pkg)));
}

/** The repository's compiler options (tsconfig.base.json). */
export function baseOptions(root: string): ts.CompilerOptions {
  const path = join(root, 'tsconfig.base.json');
  const parsed = ts.parseJsonConfigFileContent(ts.readConfigFile(path, ts.sys.readFile).config, ts.sys, root, undefined, path);
  return parsed.options;
}

/** True when the example is a complete program: it imports from an `@hs/` package. */
export function isSelfContained(code: string): boolean {
  return /^\s*import\s[^;]*from\s+['"]@hs\/[^'"]+['"]/m.test(code);
}

/**
 * A file name for an example: `<package>.<name>.ts`, and `<package>.<name>.<n>.ts` for the n-th later export
 * whose name differs from an earlier one only in case (`ParamSchema` and `paramSchema`): file systems that
 * ignore case would make them one file, and the compiler refuses two names that differ only in case.
 */
export function exampleFileName(example: ApiExample, taken: Set<string> = new Set()): string {
  const base = `${example.pkg.replace('@hs/', '')}.${example.name}`;
  let name = `${base}.ts`;
  for (let n = 2; taken.has(name.toLowerCase()); n += 1) name = `${base}.${n}.ts`;
  taken.add(name.toLowerCase());
  return name;
}

/** Type errors of the example files, one line each (`file:line: message`). */
export function typeErrors(root: string, files: readonly string[]): string[] {
  const program = ts.createProgram([...files], { ...baseOptions(root), noEmit: true, declaration: false, sourceMap: false });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
    if (d.file === undefined || d.start === undefined) return message;
    const { line } = d.file.getLineAndCharacterOfPosition(d.start);
    return `${relative(root, d.file.fileName)}:${line + 1}: ${message}`;
  });
}
