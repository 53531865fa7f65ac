import { existsSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import type { PublicPackage } from './public-packages.js';

/** One public function or method of a package whose declared return type is (or includes) a Promise. */
export interface PromiseExport {
  /**
   * `<import specifier>:<name>`: a function (`@hs/runtime:createOutputDirectory`), a static method
   * (`@hs/ipc:TopicPublisher.create`), an instance method or function-valued property of a class or
   * interface (`@hs/runtime:RunSession#run`, `@hs/runtime:PipelineBuild#prepareRun`).
   */
  readonly id: string;
  /** The declared return type, as the `.d.ts` spells it (`Promise<RunMetrics>`). */
  readonly returns: string;
}

/**
 * Every function and method the built type declarations of `pkg` export (each `exports` entry's
 * `import.types` file, or its `types` for an entry without conditions; `./package.json` aside) whose return type is a Promise or a union with one.
 * Members count where this package declares them (an inherited member is listed under the package that
 * declares it); what an abstract class leaves to its subclasses (abstract members, optional hooks such
 * as `Operator.start?()`) is a callback contract the user implements, not a function hs provides.
 * @throws Error when an entry's declaration file is missing (build the package first).
 */
export function promiseExports(pkg: PublicPackage): PromiseExport[] {
  const entries = declarationEntries(pkg);
  const program = ts.createProgram(
    entries.map((e) => e.file),
    {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2023.d.ts', 'lib.esnext.disposable.d.ts'],
      types: ['node'],
      strict: true,
      skipLibCheck: true,
      noEmit: true,
    },
  );
  const checker = program.getTypeChecker();
  const own = (decl: ts.Declaration): boolean => {
    const file = decl.getSourceFile().fileName;
    return file.startsWith(`${pkg.dir}/`) && !file.includes('/node_modules/');
  };
  const found = new Map<string, string>();
  const record = (id: string, signatures: readonly ts.Signature[]): void => {
    for (const signature of signatures) {
      const returned = checker.getReturnTypeOfSignature(signature);
      if (isPromise(returned)) found.set(id, checker.typeToString(returned));
    }
  };
  const members = (owner: string, separator: '.' | '#', type: ts.Type, contract: ts.ClassLikeDeclaration | null): void => {
    for (const member of checker.getPropertiesOfType(type)) {
      const decl = member.valueDeclaration ?? member.declarations?.[0];
      if (decl === undefined || !own(decl) || ts.isConstructorDeclaration(decl)) continue;
      if (contract !== null && isLeftToSubclasses(decl)) continue;
      const memberType = checker.getTypeOfSymbolAtLocation(member, decl);
      record(`${owner}${separator}${memberName(member)}`, checker.getNonNullableType(memberType).getCallSignatures());
    }
  };
  for (const entry of entries) {
    const source = program.getSourceFile(entry.file);
    const moduleSymbol = source === undefined ? undefined : checker.getSymbolAtLocation(source);
    if (moduleSymbol === undefined) throw new Error(`${entry.file}: not a module`);
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const name = `${entry.specifier}:${exported.name}`;
      const decl = symbol.valueDeclaration ?? symbol.declarations?.[0];
      if (decl === undefined) continue;
      if (symbol.flags & ts.SymbolFlags.Function) {
        record(name, checker.getTypeOfSymbolAtLocation(symbol, decl).getCallSignatures());
      } else if (symbol.flags & ts.SymbolFlags.Class) {
        const classDecl = symbol.declarations?.find(ts.isClassDeclaration) ?? null;
        const isAbstract = classDecl?.modifiers?.some((m) => m.kind === ts.SyntaxKind.AbstractKeyword) === true;
        members(name, '.', checker.getTypeOfSymbolAtLocation(symbol, decl), null);
        members(name, '#', checker.getDeclaredTypeOfSymbol(symbol), isAbstract ? classDecl : null);
      } else if (symbol.flags & ts.SymbolFlags.Interface) {
        members(name, '#', checker.getDeclaredTypeOfSymbol(symbol), null);
      }
    }
  }
  return [...found].map(([id, returns]) => ({ id, returns })).sort((a, b) => a.id.localeCompare(b.id));
}

/** The import specifier and built `.d.ts` of every entry point `pkg` exports. */
function declarationEntries(pkg: PublicPackage): { specifier: string; file: string }[] {
  const exportsField = (pkg.manifest.exports ?? {}) as Record<string, unknown>;
  const entries: { specifier: string; file: string }[] = [];
  for (const [subpath, conditions] of Object.entries(exportsField)) {
    if (subpath === './package.json' || typeof conditions !== 'object' || conditions === null) continue;
    const conditionsOf = conditions as Record<string, unknown>;
    const types = (conditionsOf['import'] as Record<string, unknown> | undefined)?.['types'] ?? conditionsOf['types'];
    if (typeof types !== 'string') continue;
    const file = join(pkg.dir, types);
    if (!existsSync(file)) throw new Error(`${pkg.name}: ${file} is missing; build the package first (pnpm turbo run build --filter ${pkg.name})`);
    entries.push({ specifier: subpath === '.' ? pkg.name : `${pkg.name}${subpath.slice(1)}`, file });
  }
  return entries;
}

/** A Promise, or a union with a Promise in it (`Result<void> | Promise<void>`). */
function isPromise(type: ts.Type): boolean {
  if (type.isUnion()) return type.types.some(isPromise);
  return type.getSymbol()?.getName() === 'Promise';
}

/** An abstract member or an optional method: what a subclass of an abstract class implements. */
function isLeftToSubclasses(decl: ts.Declaration): boolean {
  const abstract = ts.canHaveModifiers(decl) && ts.getModifiers(decl)?.some((m) => m.kind === ts.SyntaxKind.AbstractKeyword) === true;
  const optionalMethod = ts.isMethodDeclaration(decl) && decl.questionToken !== undefined;
  return abstract || optionalMethod;
}

/** A member's name as source spells it: `run`, or `[Symbol.asyncDispose]` for a well-known symbol. */
function memberName(member: ts.Symbol): string {
  const wellKnown = /^__@(\w+)@\d+$/.exec(member.escapedName as string);
  return wellKnown === null ? member.name : `[Symbol.${wellKnown[1]}]`;
}
