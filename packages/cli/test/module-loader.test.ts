import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode } from '@hs/streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPipelineModule } from '../src/module-loader.js';
import { FIXTURE, PACKAGE_DIR } from './run-hs.js';

// Inside the package so that the copied fixture resolves @hs/* from its node_modules.
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(PACKAGE_DIR, 'test', '.tmp-loader-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function manifest(name: string, body: unknown): Promise<string> {
  const pkg = join(dir, name);
  await mkdir(pkg, { recursive: true });
  await writeFile(join(pkg, 'package.json'), JSON.stringify(body));
  return pkg;
}

describe('loadPipelineModule', () => {
  it('loads a package directory through its hs.pipelineModule field', async () => {
    const pkg = await manifest('with-field', { name: 'with-field', hs: { pipelineModule: './dist/pipeline.mjs' } });
    await mkdir(join(pkg, 'dist'));
    await copyFile(FIXTURE, join(pkg, 'dist', 'pipeline.mjs'));
    const loaded = await loadPipelineModule('with-field', dir);
    expect([loaded.module.name, loaded.path]).toEqual(['counting-pipeline', join(pkg, 'dist', 'pipeline.mjs')]);
  });

  it('says which build makes a missing module file, and names a package without the field', async () => {
    const unbuilt = await manifest('unbuilt', { name: '@me/unbuilt', hs: { pipelineModule: './dist/pipeline.js' } });
    await expect(loadPipelineModule(unbuilt, dir)).rejects.toMatchObject({
      code: ErrorCode.NotFound,
      message: `NotFound: ${join(unbuilt, 'dist', 'pipeline.js')} is missing: build it first (pnpm --filter @me/unbuilt build)`,
    });
    const plain = await manifest('plain', { name: 'plain' });
    await expect(loadPipelineModule('./plain', dir)).rejects.toThrow(
      `InvalidArgument: ${join(plain, 'package.json')} has no "hs": { "pipelineModule": "<file>" } field naming its pipeline module`,
    );
  });

  it('reports a module whose import throws, with the first line of the error', async () => {
    const file = join(dir, 'throws.mjs');
    await writeFile(file, "throw new Error('top-level boom\\nsecond line');\n");
    await expect(loadPipelineModule(file, dir)).rejects.toMatchObject({
      code: ErrorCode.InvalidArgument,
      message: `InvalidArgument: importing ${file} failed: top-level boom`,
      cause: expect.objectContaining({ message: 'top-level boom\nsecond line' }),
    });
  });

  it('refuses files that are not JavaScript modules and paths that do not exist', async () => {
    await writeFile(join(dir, 'graph.json'), '{}');
    await expect(loadPipelineModule('graph.json', dir)).rejects.toThrow(`InvalidArgument: ${join(dir, 'graph.json')} is not a JavaScript module (.js, .mjs or .cjs)`);
    await expect(loadPipelineModule('./nowhere.js', dir)).rejects.toMatchObject({ code: ErrorCode.NotFound });
  });
});
