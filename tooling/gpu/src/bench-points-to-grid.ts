// PointsToGrid rows of `pnpm bench:gpu`: the stream-ordered GPU build (pointsToGridAsync, with its one
// report read-back) and the capacity-bounded build (encode + stream sync) for 1M, 10M and 100M points,
// uniform and clustered (bunny-like shells), against baselines measured in the same run: the build's CUB radix
// sort of the same packed keys, bare (the lower bound of a sort-based build), narrowed to the key bits as the build
// sorts them (its cached graph) and over all 64 bits (the sort before the narrowing), and a bare CUB SortPairs
// of as many full-entropy 64-bit keys with 32-bit values; and the host TS builder (1M points only: it runs at
// about a million points per second). A small build first warms the kernels and the resource up, so the first
// size is measured as the others. HS_BENCH_P2G_POINTS=1e6,1e7 limits the sizes. HS_BENCH_P2G_PROFILE=uniform (or
// clustered) is the profiler's knob: one pointsToGridAsync build of the first size of that cloud, no warm-up, then
// the process exits, so a kernel profiler (`ncu --set basic`) sees that build's kernels only.
import type { CudaNativeBinding } from '@hs/cuda-native';
import { BoundedPointsToGrid, ResourceBuffer, DeviceResource, GridType, HostResource, pointsToGrid, pointsToGridAsync, type MemoryBlock } from '@hs/nanovdb-mr';
import { HostBackend, unwrap, type CudaBackend, type Device } from '@hs/streams';

/**
 * The native baselines (native/src/bench-bindings.cc): mean ns over `iterations` of the build's bare CUB
 * radix sort of its packed keys for `count` points at device address `points` (encoding 1: f32 world), narrowed
 * (the build's graph; `graph` false: it could not be made, `graphStatus` says why, and the 64-bit fallback was timed) and over all 64 bits,
 * with the key width, the host ns making the graph took (a workspace's first build) and a CUDA status; and of a bare 64-bit-key SortPairs of `count` full-entropy keys (negative:
 * a CUDA status).
 */
type SortBaseline = {
  benchPointsToGridSorts(
    points: bigint,
    encoding: number,
    count: number,
    inverseVoxelSize: number,
    ox: number,
    oy: number,
    oz: number,
    iterations: number,
  ): { status: number; narrowedNs: number; sort64Ns: number; keyBits: number; graph: boolean; graphStatus: number; graphMakeNs: number };
  benchSortPairs64(count: number, iterations: number): number;
};

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** Deterministic pseudo-random numbers in [0, 1). */
function random(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 4294967296;
  };
}

/** World positions (voxel size 1): uniform in a cube with about one point per 8 voxels, or on four sphere shells with about 4 points per surface voxel. */
function cloud(n: number, kind: 'uniform' | 'clustered'): Float32Array {
  const next = random(kind === 'uniform' ? 1 : 2);
  const out = new Float32Array(3 * n);
  if (kind === 'uniform') {
    const side = Math.cbrt(8 * n);
    for (let i = 0; i < 3 * n; i++) out[i] = next() * side;
    return out;
  }
  const radius = Math.sqrt(n / (16 * 4 * Math.PI));
  for (let i = 0; i < n; i++) {
    const c = Math.floor(next() * 4);
    const u = 2 * next() - 1;
    const t = 2 * Math.PI * next();
    const s = Math.sqrt(1 - u * u);
    const r = radius * (0.6 + 0.2 * c) * (1 + 0.002 * (next() - 0.5));
    out[3 * i] = c * radius * 0.9 + r * s * Math.cos(t);
    out[3 * i + 1] = -c * radius * 0.5 + r * s * Math.sin(t);
    out[3 * i + 2] = r * u;
  }
  return out;
}

const ms = (ns: number): string => (ns / 1e6).toFixed(ns >= 1e8 ? 0 : 2);
const rate = (n: number, ns: number): string => `${((n / ns) * 1e3).toFixed(1)}`;

/** Runs the PointsToGrid measurements and returns the table lines. */
export async function benchPointsToGrid(backend: CudaBackend, cuda: CudaNativeBinding, device: Device): Promise<string[]> {
  const sizes = (process.env.HS_BENCH_P2G_POINTS ?? '1e6,1e7,1e8').split(',').map(Number);
  const resource = new DeviceResource(backend, device);
  const stream = unwrap(backend.createStream(device, { label: 'pointsToGrid bench' }));
  const options = { gridType: GridType.OnIndex, voxelSize: 1 } as const;
  const lines = [
    '| points | cloud | voxels / leaves | GPU pointsToGridAsync | GPU bounded build | build sort, narrowed (key bits) | build keys over 64 bits | bare 64-bit SortPairs | async / build sort | bounded / build sort | async / 64-bit sort | host TS builder | GPU async vs host |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const baselines = cuda as CudaNativeBinding & SortBaseline;
  const profile = process.env.HS_BENCH_P2G_PROFILE;
  if (profile === 'uniform' || profile === 'clustered') {
    const n = sizes[0] as number;
    const positions = cloud(n, profile);
    const input = unwrap(ResourceBuffer.allocateAsync(backend, stream, resource, 3 * n, { noInit: true, element: Float32Array }));
    unwrap(backend.copyFromHostAsync(stream, input.data as MemoryBlock, new Uint8Array(positions.buffer)));
    const built = await pointsToGridAsync(backend, stream, resource, { space: 'world', positions: input }, options);
    await backend.synchronizeStream(stream);
    console.log(`profile build: ${n} ${profile} points, ${built.counts.voxels} voxels / ${built.counts.leaves} leaves, ${built.gridSize} B`);
    process.exit(0);
  }
  {
    // warm-up: module loading, the resource's first blocks and the sort's first launch are not the first size's
    const positions = cloud(100_000, 'uniform');
    const input = unwrap(ResourceBuffer.allocateAsync(backend, stream, resource, 3 * 100_000, { noInit: true, element: Float32Array }));
    unwrap(backend.copyFromHostAsync(stream, input.data as MemoryBlock, new Uint8Array(positions.buffer)));
    for (let round = 0; round < 2; round++) {
      const built = await pointsToGridAsync(backend, stream, resource, { space: 'world', positions: input }, options);
      await backend.synchronizeStream(stream);
      built.buffer.dispose();
    }
    if (baselines.benchSortPairs64(100_000, 1) < 0) throw new Error('bench: the 64-bit SortPairs baseline failed');
    input.dispose();
  }
  for (const kind of ['uniform', 'clustered'] as const) {
    for (const n of sizes) {
      const positions = cloud(n, kind);
      const input = unwrap(ResourceBuffer.allocateAsync(backend, stream, resource, 3 * n, { noInit: true, element: Float32Array }));
      unwrap(backend.copyFromHostAsync(stream, input.data as MemoryBlock, new Uint8Array(positions.buffer)));
      await backend.synchronizeStream(stream);
      const span = { space: 'world', positions: input } as const;
      const asyncNs: number[] = [];
      let counts = { voxels: 0, leaves: 0, lowers: 0, uppers: 0 };
      for (let round = 0; round < 4; round++) {
        const t0 = process.hrtime.bigint();
        const built = await pointsToGridAsync(backend, stream, resource, span, options);
        await backend.synchronizeStream(stream);
        asyncNs.push(Number(process.hrtime.bigint() - t0));
        counts = { ...built.counts };
        built.buffer.dispose();
      }
      const bounded = unwrap(BoundedPointsToGrid.create(backend, stream, resource, { points: n, uppers: counts.uppers, lowers: counts.lowers, leaves: counts.leaves }, options));
      const boundedNs: number[] = [];
      for (let round = 0; round < 4; round++) {
        const t0 = process.hrtime.bigint();
        unwrap(bounded.encode(stream, span));
        await backend.synchronizeStream(stream);
        boundedNs.push(Number(process.hrtime.bigint() - t0));
      }
      const report = await bounded.readReport(stream);
      if (report.overflowed || report.counts.voxels !== counts.voxels) throw new Error('bench: the bounded build disagrees with pointsToGridAsync');
      bounded.dispose();
      const block = input.data as MemoryBlock;
      const sorts = baselines.benchPointsToGridSorts(block.memory.address + BigInt(block.byteOffset), 1, n, 1, 0, 0, 0, 3);
      if (sorts.status !== 0) throw new Error(`bench: CUB sort baseline failed with CUDA status ${sorts.status}`);
      const sortNs = sorts.narrowedNs;
      const narrowed = `${ms(sortNs)} ms (${sorts.keyBits} bits, ${sorts.graph ? `graph made in ${ms(sorts.graphMakeNs)} ms` : `no graph (CUDA status ${sorts.graphStatus}): the 64-bit fallback`})`;
      const sort64Ns = baselines.benchSortPairs64(n, 3);
      if (sort64Ns < 0) throw new Error(`bench: 64-bit SortPairs baseline failed with CUDA status ${-sort64Ns}`);
      input.dispose();
      let host = 'not run (too slow)';
      let versusHost = '-';
      if (n <= 1e6) {
        const hostBackend = new HostBackend();
        const t0 = process.hrtime.bigint();
        const handle = unwrap(pointsToGrid(hostBackend, new HostResource(hostBackend), { space: 'world', positions }, options));
        const hostNs = Number(process.hrtime.bigint() - t0);
        handle.dispose();
        host = `${ms(hostNs)} ms (${rate(n, hostNs)} M/s)`;
        versusHost = `${(hostNs / median(asyncNs.slice(1))).toFixed(0)}x faster`;
      }
      const a = median(asyncNs.slice(1));
      const b = median(boundedNs.slice(1));
      lines.push(
        `| ${n.toExponential(0)} | ${kind} | ${counts.voxels} / ${counts.leaves} | ${ms(a)} ms (${rate(n, a)} M/s) | ${ms(b)} ms (${rate(n, b)} M/s) | ${narrowed} | ${ms(sorts.sort64Ns)} ms | ${ms(sort64Ns)} ms (${rate(n, sort64Ns)} M/s) | ${(a / sortNs).toFixed(2)} | ${(b / sortNs).toFixed(2)} | ${(a / sort64Ns).toFixed(2)} | ${host} | ${versusHost} |`,
      );
    }
  }
  unwrap(backend.destroyStream(stream));
  return lines;
}
