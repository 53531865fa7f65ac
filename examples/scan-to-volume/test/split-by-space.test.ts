import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ExecutionContext, type InputPort, Operator, type OperatorSpec, compile } from '@hs/compiler';
import { bunnyPoints, type PointCloud } from '@hs/example-point-cloud-input';
import { RunSession } from '@hs/runtime';
import { Device, ErrorCode, HostBackend, HsError, MemoryKind, OK_VOID, type Result, unwrap } from '@hs/streams';
import { DType } from '@hs/tensor';
import { afterAll, describe, expect, it } from 'vitest';
import { type GridBuilderKind, type ScanToVolumeOptions, buildScanToVolumeGraph } from '../src/pipeline.js';

const dir = mkdtempSync(join(tmpdir(), 'hs-scan-split-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Host sink keeping a copy of every grid it receives (the whole tensor). */
class GridCapture extends Operator {
  grid!: InputPort;
  readonly grids: Uint8Array[] = [];
  setup(spec: OperatorSpec): void {
    this.grid = spec.input('grid', { memoryKind: MemoryKind.PinnedHost, dtype: DType.uint8, rank: 1 });
  }
  compute(ctx: ExecutionContext): Result<void> {
    const grid = ctx.receive(this.grid);
    if (grid === undefined) return OK_VOID;
    const view = grid.hostView();
    if (!view.ok) return view;
    this.grids.push(view.value.slice());
    return OK_VOID;
  }
}

/** Points in clusters spread over several root tiles (4096 voxels at voxel size 1), of very different sizes, around the origin. */
function clusterCloud(): PointCloud {
  const centres = [
    [-9000, 100, 50, 40],
    [-5000, -3000, 10, 300],
    [2000, 6000, -7000, 120],
    [7000, 7000, 9000, 15],
    [9000, -8000, 200, 200],
    [100, -100, 5000, 90],
  ] as const;
  const values: number[] = [];
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (const [x, y, z, n] of centres) for (let i = 0; i < n; i++) values.push(x + 300 * (random() - 0.5), y + 300 * (random() - 0.5), z + 300 * (random() - 0.5));
  return { positions: new Float64Array(values), source: 'six clusters' };
}

/** Runs the flagship graph on a host backend of `deviceCount` devices with a capture on the grid it writes; the captured grids, in frame order. */
async function frames(options: ScanToVolumeOptions, deviceCount: number) {
  const built = unwrap(buildScanToVolumeGraph(options));
  const capture = built.graph.add(new GridCapture('capture'));
  built.graph.addFlow(built.split === null ? built.builder.grid : built.split.merge.grid, capture.grid);
  const plan = unwrap(compile(built.graph, built.compileOptions));
  const backend = new HostBackend({ deviceCount });
  const session = unwrap(RunSession.create(plan, { backend, resources: built.poolResources }));
  const metrics = await session.run();
  session.dispose();
  backend.dispose();
  expect(metrics.frames).toBe(built.frames);
  return { built, grids: capture.grids, plan };
}

const cases: [string, PointCloud, number, GridBuilderKind, number[]][] = [
  ['six clusters, 2 devices, stream builder', clusterCloud(), 1, 'stream', [0, 1]],
  ['six clusters, 3 devices, stream builder', clusterCloud(), 1, 'stream', [0, 1, 2]],
  ['six clusters, 4 parts on 2 devices (repeated ordinals), stream builder', clusterCloud(), 1, 'stream', [0, 1, 1, 0]],
  ['six clusters, 2 parts on one device, host builder', clusterCloud(), 1, 'host', [0, 0]],
  ['the bunny at 0.2 (4 root tiles), 3 devices', bunnyPoints(), 0.2, 'stream', [0, 1, 2]],
];

describe('the flagship split by space: every frame byte-identical to the one-device run', () => {
  it.each(cases)('%s', async (_, cloud, voxelSize, builder, ordinals) => {
    const options: ScanToVolumeOptions = { cloud, voxelSize, scans: 12, sweeps: 2, rateHz: 1000, outDir: dir, builder };
    const one = await frames({ ...options, outDir: mkdtempSync(join(dir, 'one-')) }, 1);
    const split = await frames({ ...options, outDir: mkdtempSync(join(dir, 'split-')), devices: ordinals.map((d) => Device.cuda(d)) }, Math.max(...ordinals) + 1);
    expect(split.built.split?.parts.map((p) => p.device)).toEqual(ordinals.map((d) => Device.cuda(d)));
    // the split really splits: more than one part owns points
    expect(split.built.split!.parts.filter((p) => p.points > 0).length).toBeGreaterThan(1);
    expect(split.grids.length).toBe(one.grids.length);
    for (let f = 0; f < one.grids.length; f++) {
      const a = one.grids[f]!;
      const b = split.grids[f]!;
      const size = Number(new DataView(a.buffer, a.byteOffset).getBigUint64(32, true));
      expect(Buffer.compare(b.subarray(0, size), a.subarray(0, size)), `frame ${f}`).toBe(0);
      // the stream builder's slots hold zeros past the grid, and so do the merge's
      if (builder === 'stream') expect(Buffer.compare(b, a), `frame ${f} slot`).toBe(0);
      else expect(b.subarray(size).every((x) => x === 0)).toBe(true);
    }
    // voxels add up over the parts; the summary's figures
    expect(split.built.split!.parts.reduce((s, p) => s + p.builder.accumulated.voxelCount, 0)).toBe(one.built.sizing.voxelCount);
    expect(split.built.split!.merge.accumulated).toEqual({ frames: one.grids.length, gridBytes: one.built.sizing.gridBytes });
  }, 60_000);

  it('a part that gets no points at all (fewer root tiles than parts) builds empty grids that merge away', async () => {
    const cloud: PointCloud = { positions: new Float64Array([1, 2, 3, 4, 5, 6, 7, 8, 9, 100, 50, 20]), source: 'one tile' };
    const options: ScanToVolumeOptions = { cloud, voxelSize: 1, scans: 3, sweeps: 1, rateHz: 1000, outDir: dir };
    const one = await frames({ ...options, outDir: mkdtempSync(join(dir, 'one-')) }, 1);
    const split = await frames({ ...options, outDir: mkdtempSync(join(dir, 'split-')), devices: [Device.cuda(0), Device.cuda(1)] }, 2);
    expect(split.built.split!.parts.map((p) => p.points)).toEqual([4, 0]);
    expect(split.grids.map((g) => Buffer.from(g).toString('hex'))).toEqual(one.grids.map((g) => Buffer.from(g).toString('hex')));
  }, 60_000);

  it('the plan places each part builder on its device, two streams for a repeated ordinal, the merge on the host', () => {
    const built = unwrap(buildScanToVolumeGraph({ cloud: bunnyPoints(), voxelSize: 0.5, scans: 6, sweeps: 1, rateHz: 1000, outDir: dir, devices: [Device.cuda(0), Device.cuda(0)] }));
    const text = unwrap(compile(built.graph, built.compileOptions)).toText();
    expect(text).toContain('points-to-grid-0 in partition:points-to-grid-0: cuda:0 stream stream:points-to-grid-0@cuda:0');
    expect(text).toContain('points-to-grid-1 in partition:points-to-grid-1: cuda:0 stream stream:points-to-grid-1@cuda:0');
    expect(text).toMatch(/grid-merge in partition:grid-merge: host-only/);
    expect(text).toContain('points-to-grid-1.grid->grid-merge.part-1');
    expect(text).toMatch(/diagnostics \(0\)/);
  });

  it('a device the backend lacks is refused when the session is created, naming it', () => {
    const built = unwrap(buildScanToVolumeGraph({ cloud: bunnyPoints(), voxelSize: 0.5, scans: 6, sweeps: 1, rateHz: 1000, outDir: dir, devices: [Device.cuda(0), Device.cuda(1)] }));
    const backend = new HostBackend();
    const session = RunSession.create(unwrap(compile(built.graph, built.compileOptions)), { backend, resources: built.poolResources });
    backend.dispose();
    expect(session.ok).toBe(false);
    if (!session.ok) {
      expect(session.error.code).toBe(ErrorCode.InvalidArgument);
      expect(session.error.message).toContain('cuda:1');
    }
  });

  it.each([
    [[], 'devices must list 1 to 16 CUDA devices, got 0 entries'],
    [[Device.cpu(), Device.cuda(0)], 'devices must be CUDA devices (Device.cuda(n)), got cpu'],
    [Array.from({ length: 17 }, () => Device.cuda(0)), 'got 17 entries'],
  ])('refuses devices %j', (devices, message) => {
    const build = () => buildScanToVolumeGraph({ cloud: bunnyPoints(), voxelSize: 0.5, scans: 6, sweeps: 1, rateHz: 1000, outDir: dir, devices });
    expect(build).toThrow(HsError);
    expect(build).toThrow(message);
  });
});
