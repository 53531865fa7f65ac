import { compile } from '@hs/compiler';
import { AsyncFromSync, DeviceResource, FaultyResource, HostResource } from '@hs/nanovdb-mr';
import { RunSession } from '@hs/runtime';
import { ErrorCode, HostBackend, unwrap } from '@hs/streams';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildScanToVolumeGraph, type ScanToVolumeGraph } from '../src/pipeline.js';
import { smallBunny } from './small-bunny.js';

const dir = mkdtempSync(join(tmpdir(), 'hs-scan-operator-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `built` on a fresh host backend; resolves the metrics, rejects as `run()` does (everything disposed either way). */
async function runOnHost(built: ScanToVolumeGraph) {
  const backend = new HostBackend();
  const session = unwrap(RunSession.create(unwrap(compile(built.graph, built.compileOptions)), { backend }));
  try {
    return await session.run();
  } finally {
    session.dispose();
    backend.dispose();
  }
}

describe('PointsToGridOperator through an injected resource', () => {
  it('host builder: fails the run with the resource OutOfMemory, named, and returns every byte it took', async () => {
    let faulty: FaultyResource<HostResource> | null = null;
    const built = unwrap(
      buildScanToVolumeGraph(smallBunny(dir, { builder: 'host', upstream: (backend) => (faulty = new FaultyResource(new HostResource(backend), { failAt: 9 })) })),
    );
    await expect(runOnHost(built)).rejects.toMatchObject({ code: ErrorCode.OutOfMemory, message: expect.stringContaining('points-to-grid') });
    expect(faulty).not.toBeNull();
    const stats = built.statistics()!.statistics;
    expect(stats.allocations.current).toBe(0);
    expect(stats.bytes.current).toBe(0);
  }, 60_000);

  it('stream builder: its one up-front allocation failing fails the run with OutOfMemory, named, nothing left allocated', async () => {
    const built = unwrap(
      buildScanToVolumeGraph(smallBunny(dir, { upstream: (backend) => new AsyncFromSync(backend, new FaultyResource(new HostResource(backend), { failAt: 1 })) })),
    );
    await expect(runOnHost(built)).rejects.toMatchObject({ code: ErrorCode.OutOfMemory, message: expect.stringContaining('points-to-grid') });
    const stats = built.statistics()!.statistics;
    expect([stats.allocations.total, stats.allocations.current, stats.bytes.current]).toEqual([0, 0, 0]);
  }, 60_000);

  it('stream builder: a sync-only resource is NotSupported, saying what to inject instead', async () => {
    const built = unwrap(buildScanToVolumeGraph(smallBunny(dir, { upstream: (backend) => new HostResource(backend) })));
    await expect(runOnHost(built)).rejects.toThrow(/^NotSupported: operator points-to-grid: the stream builder allocates in stream order: inject an async resource .*or use --builder host/);
  }, 60_000);

  it('stream builder: ONE allocation for the whole run, through the statistics-wrapped DeviceResource, returned at the end', async () => {
    let device: DeviceResource | null = null;
    const built = unwrap(
      buildScanToVolumeGraph(smallBunny(dir, { sweeps: 2, upstream: (backend, d) => (device = new DeviceResource(backend, d)) })),
    );
    const result = await runOnHost(built);
    expect(result.frames).toBe(12);
    expect(device).not.toBeNull();
    const stats = built.statistics()!.statistics;
    expect([stats.allocations.total, stats.allocations.current, stats.bytes.current]).toEqual([1, 0, 0]);
    expect(built.builder.accumulated).toEqual({ scans: 12, points: 2 * 1839, voxelCount: built.sizing.voxelCount, gridBytes: built.sizing.gridBytes });
  }, 60_000);

  it('rejects a cloud with a non-finite point before building anything', () => {
    const r = buildScanToVolumeGraph({ cloud: { positions: Float64Array.from([0, 0, 0, Number.NaN, 1, 1]), source: 'nan-cloud' }, voxelSize: 1, scans: 2, sweeps: 1, rateHz: 10, outDir: dir });
    expect(!r.ok && r.error.code).toBe(ErrorCode.InvalidArgument);
    expect(!r.ok && r.error.message).toMatch(/^InvalidArgument: nan-cloud: sizing the volume: .*point 1 has a non-finite coordinate/);
  });
});

describe('empty scans', () => {
  it('an empty azimuth sector is streamed as a [0, 3] scan and leaves the volume as it was', async () => {
    const cloud = { positions: Float64Array.from([1, 0, 5, 0, 1, 6, -1, 0, 7, 0, -1, 8, 2, 0.001, 9]), source: 'five points' };
    const built = unwrap(buildScanToVolumeGraph({ cloud, voxelSize: 1, scans: 4, sweeps: 1, rateHz: 1000, outDir: dir }));
    expect(built.sweep.scans[3]!.length).toBe(0);
    const session = unwrap(RunSession.create(unwrap(compile(built.graph, built.compileOptions)), { backend: 'host' }));
    const metrics = await session.run();
    session.dispose();
    expect(metrics.frames).toBe(4);
    expect(built.builder.accumulated).toEqual({ scans: 4, points: 5, voxelCount: 5, gridBytes: built.sizing.gridBytes });
    expect(built.pngWriter.written).toBe(1);
  }, 60_000);
});
