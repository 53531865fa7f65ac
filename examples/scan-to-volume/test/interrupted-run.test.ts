import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compile } from '@hs/compiler';
import { bunnyPoints } from '@hs/example-point-cloud-input';
import { RunSession } from '@hs/runtime';
import { HostBackend, unwrap } from '@hs/streams';
import { afterAll, describe, expect, it } from 'vitest';
import { buildScanToVolumeGraph, type GridBuilderKind } from '../src/pipeline.js';
import { runSummaryLines } from '../src/run-summary.js';

const dir = mkdtempSync(join(tmpdir(), 'hs-scan-interrupted-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a run stopped early (Ctrl-C)', () => {
  it.each(['stream', 'host'] as const)('%s builder: the summary reports the volume of the scans done, the same one the .nvdb file holds', async (builder: GridBuilderKind) => {
    const out = join(dir, builder);
    mkdirSync(out);
    const built = unwrap(buildScanToVolumeGraph({ cloud: bunnyPoints(), voxelSize: 0.5, scans: 36, sweeps: 100, rateHz: 1000, outDir: out, builder }));
    const backend = new HostBackend();
    const session = unwrap(RunSession.create(unwrap(compile(built.graph, built.compileOptions)), { backend }));
    const controller = new AbortController();
    // Stop as Ctrl-C does once a few grids are on disk: mid-sweep, long before the 3600 scans.
    const watch = setInterval(() => built.nvdbWriter.written >= 3 && controller.abort(), 5);
    const metrics = await session.run({ signal: controller.signal });
    clearInterval(watch);
    session.dispose();
    backend.dispose();
    expect(metrics.frames).toBeLessThan(built.frames);

    const text = unwrap(runSummaryLines(built, 'bunny', 1000)).join('\n');
    const { scans, voxelCount, gridBytes } = built.builder.accumulated;
    expect(voxelCount).toBeGreaterThan(0);
    expect(text).toContain(`volume of the ${scans} scans done (the run ended before its ${built.frames} scans): ${voxelCount} active voxels (${built.sizing.voxelCount} expected from the whole cloud), ${gridBytes}-byte OnIndex grid`);
    // The file holds the last grid built: the same voxels and bytes the volume line reports.
    expect(text).toContain(`re-read by hs: grid "scan-to-volume", ${voxelCount} voxels, ${gridBytes} bytes`);
    if (builder === 'stream') expect(text).toMatch(/builder: stream, one bounded build per scan .*; last build read \d+ of \d+ points, wrote \d+ voxels/);
  }, 60_000);
});
