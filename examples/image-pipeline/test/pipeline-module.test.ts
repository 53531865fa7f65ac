import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compile } from '@hs/compiler';
import { RunSession, checkPipelineModule, pipelineSummary } from '@hs/runtime';
import { ErrorCode, unwrap } from '@hs/streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import imagePipelineModule from '../src/pipeline-module.js';
import { runCli } from '../src/cli.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hs-image-module-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function parse(args: readonly string[]) {
  const logs: string[] = [];
  const errors: string[] = [];
  const request = imagePipelineModule.parseArguments(args, { log: (l) => logs.push(l), error: (l) => errors.push(l) });
  return { request, logs, errors };
}

describe('image-pipeline as a PipelineModule', () => {
  it('is a valid pipeline module named image-pipeline', () => {
    expect(checkPipelineModule(imagePipelineModule, 'pipeline-module.ts').ok).toBe(true);
    expect(imagePipelineModule.name).toBe('image-pipeline');
  });

  it('builds, compiles and runs like pnpm run main, with the same summary lines', async () => {
    const outDir = join(dir, 'module');
    const { request } = parse(['--frames', '3', '--out', outDir, '--backend', 'host']);
    const options = unwrap(request);
    if (options.kind !== 'build') throw new Error('expected a build request');
    const build = await imagePipelineModule.build(options.options);
    expect(build.expectedFrames).toBe(3);
    expect(build.sessionOptions).toEqual({ backend: 'host' });
    const plan = unwrap(compile(build.graph, build.compileOptions));
    expect(plan.operators.map((o) => o.name)).toEqual(['source', 'grayscale', 'downscale', 'png-writer', 'statistics']);
    await build.prepareRun!();
    const session = unwrap(RunSession.create(plan, build.sessionOptions));
    const metrics = await session.run();
    session.dispose();
    const moduleLines = unwrap(pipelineSummary(build, metrics));

    const cliOut = join(dir, 'cli');
    const logs: string[] = [];
    const code = await runCli(['--frames', '3', '--out', cliOut], { log: (l) => logs.push(l), error: () => undefined }, { HS_BACKEND: 'host' });
    expect(code).toBe(0);
    expect(moduleLines[0]).toBe(logs.at(-2));
    expect(moduleLines[1]).toBe(logs.at(-1)?.replaceAll(cliOut, outDir));
    expect((await readdir(outDir)).sort()).toEqual(['frame-00000.png', 'frame-00001.png', 'frame-00002.png']);
  });

  it('answers --help with an exit request and bad options with the same typed errors as the CLI', () => {
    const help = parse(['--help']);
    expect(unwrap(help.request)).toEqual({ kind: 'exit', exitCode: 0 });
    expect(help.logs.join('\n')).toContain('--frames <n>');
    const bad = parse(['--frames', '0']);
    expect(!bad.request.ok && bad.request.error.code).toBe(ErrorCode.InvalidArgument);
  });

  it('reports an unreadable input from build() and creates no output directory', async () => {
    const outDir = join(dir, 'never');
    const request = unwrap(parse(['--input', join(dir, 'missing.png'), '--out', outDir]).request);
    if (request.kind !== 'build') throw new Error('expected a build request');
    await expect(imagePipelineModule.build(request.options)).rejects.toMatchObject({ code: ErrorCode.NotFound });
    await expect(readdir(outDir)).rejects.toThrow();
  });
});
