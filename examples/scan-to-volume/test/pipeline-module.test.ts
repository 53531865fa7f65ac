import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compile } from '@hs/compiler';
import { RunSession, pipelineSummary } from '@hs/runtime';
import { ErrorCode, unwrap } from '@hs/streams';
import { afterAll, describe, expect, it } from 'vitest';
import scanToVolumeModule from '../src/pipeline-module.js';
import { VOLUME_FILE } from '../src/pipeline.js';

const dir = mkdtempSync(join(tmpdir(), 'hs-scan-module-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the scan-to-volume pipeline module', () => {
  it("fails its summary (so `hs run` exits 1) when the written .nvdb does not re-read and validate", async () => {
    const out = join(dir, 'corrupt');
    const request = unwrap(scanToVolumeModule.parseArguments(['--backend', 'host', '--out', out, '--rate', '1000', '--scans', '4', '--voxel-size', '0.5'], { log: () => {}, error: () => {} }));
    if (request.kind !== 'build') throw new Error('expected a build request');
    const build = await scanToVolumeModule.build(request.options);
    mkdirSync(out);
    const session = unwrap(RunSession.create(unwrap(compile(build.graph, build.compileOptions)), build.sessionOptions));
    const metrics = await session.run();
    session.dispose();
    const good = pipelineSummary(build, metrics);
    expect(good.ok && good.value.join('\n')).toMatch(/checksum and structure valid/);

    writeFileSync(join(out, VOLUME_FILE), 'not an nvdb file');
    const bad = pipelineSummary(build, metrics);
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.error.code).toBe(ErrorCode.InvalidArgument);
    expect(!bad.ok && bad.error.message).toContain(join(out, VOLUME_FILE));
  }, 60_000);
});
