import type { Stats } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { dirname, extname, isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type PipelineModule, checkPipelineModule } from '@hs/runtime';
import { ErrorCode, HsError, err, ok, readRegularFile, unwrap, type Result } from '@hs/streams';
import { findInAncestors } from './checkout-search.js';

/** A loaded pipeline module and the file it came from. */
export interface LoadedPipelineModule {
  readonly module: PipelineModule;
  /** Absolute path of the JavaScript file whose default export is `module`. */
  readonly path: string;
}

const NAME_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const JS_EXTENSIONS = new Set(['.js', '.mjs', '.cjs']);

/**
 * Loads the pipeline module `target` names:
 * - a path (anything that is not a bare lower-case name): a `.js`/`.mjs`/`.cjs` file whose default export
 *   is a `PipelineModule`, or a directory whose `package.json` names that file in `hs.pipelineModule`;
 * - a bare name such as `image-pipeline`: the example directory `examples/<name>` in `cwd` or one of its
 *   parents (an hs checkout), through the same `package.json` field.
 *
 * Importing the file runs its top-level code, as `node file` would.
 *
 * @returns the module and its file.
 * @throws HsError (the promise rejects) `NotFound` (nothing there, an example that is not built: the
 *   message says which build command makes it) or `InvalidArgument` (TypeScript source, a directory
 *   without the field, an import that throws, a default export that is not a pipeline module).
 */
export async function loadPipelineModule(target: string, cwd: string): Promise<LoadedPipelineModule> {
  const path = resolve(cwd, target);
  const info = await stat(path).catch(() => undefined);
  const file = unwrap(info === undefined && NAME_PATTERN.test(target) ? await exampleModuleFile(target, cwd) : await pathModuleFile(path, info));
  let namespace: Record<string, unknown>;
  try {
    namespace = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (thrown) {
    const reason = thrown instanceof Error ? thrown.message.split('\n')[0] : String(thrown);
    throw new HsError(ErrorCode.InvalidArgument, `importing ${file} failed: ${reason}`, { cause: thrown });
  }
  return { module: unwrap(checkPipelineModule(namespace['default'], file)), path: file };
}

async function exampleModuleFile(name: string, cwd: string): Promise<Result<string>> {
  const dir = await findInAncestors(cwd, join('examples', name, 'package.json'));
  if (dir === undefined) {
    const known = await knownExamples(cwd);
    const listed = known.length === 0 ? 'no examples with a pipeline module were found from here' : `known examples: ${known.join(', ')}`;
    return err(
      ErrorCode.NotFound,
      `no example '${name}' in examples/ of ${cwd} or its parents (${listed}); give a path to a pipeline module file instead`,
    );
  }
  return moduleFileOfPackage(dirname(dir));
}

async function pathModuleFile(path: string, info: Stats | undefined): Promise<Result<string>> {
  if (info === undefined) return err(ErrorCode.NotFound, `${path} does not exist; give a pipeline module file, a package directory, or an example name`);
  if (info.isDirectory()) return moduleFileOfPackage(path);
  const extension = extname(path);
  if (extension === '.ts' || extension === '.mts' || extension === '.cts') {
    return err(ErrorCode.InvalidArgument, `${path} is TypeScript source: build it to JavaScript first and give the .js file`);
  }
  if (!JS_EXTENSIONS.has(extension)) {
    return err(ErrorCode.InvalidArgument, `${path} is not a JavaScript module (.js, .mjs or .cjs)`);
  }
  return ok(path);
}

async function moduleFileOfPackage(dir: string): Promise<Result<string>> {
  const manifestPath = join(dir, 'package.json');
  const manifest = await readManifest(manifestPath);
  if (manifest === undefined) return err(ErrorCode.InvalidArgument, `${dir} has no readable package.json; give the pipeline module file itself`);
  const field = pipelineModuleField(manifest);
  if (field === undefined) {
    return err(ErrorCode.InvalidArgument, `${manifestPath} has no "hs": { "pipelineModule": "<file>" } field naming its pipeline module`);
  }
  const file = isAbsolute(field) ? field : join(dir, field);
  if ((await stat(file).catch(() => undefined)) === undefined) {
    const name = typeof manifest['name'] === 'string' ? manifest['name'] : dir;
    return err(ErrorCode.NotFound, `${file} is missing: build it first (pnpm --filter ${name} build)`);
  }
  return ok(file);
}

async function knownExamples(cwd: string): Promise<string[]> {
  const examples = await findInAncestors(cwd, 'examples');
  if (examples === undefined) return [];
  const entries = await readdir(examples, { withFileTypes: true }).catch(() => []);
  const names: string[] = [];
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    const manifest = await readManifest(join(examples, entry.name, 'package.json'));
    if (manifest !== undefined && pipelineModuleField(manifest) !== undefined) names.push(entry.name);
  }
  return names.sort();
}

async function readManifest(path: string): Promise<Record<string, unknown> | undefined> {
  try {
    // A FIFO planted as an example's package.json is refused, not waited on.
    const parsed: unknown = JSON.parse((await readRegularFile(path, { maxBytes: 2 ** 20 })).toString('utf8'));
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function pipelineModuleField(manifest: Record<string, unknown>): string | undefined {
  const hs = manifest['hs'];
  if (typeof hs !== 'object' || hs === null) return undefined;
  const field = (hs as Record<string, unknown>)['pipelineModule'];
  return typeof field === 'string' && field !== '' ? field : undefined;
}
