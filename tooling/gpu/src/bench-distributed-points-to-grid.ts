// The distributedPointsToGrid rows of `pnpm bench:gpu` (issue 27 item 3): one grid from host points (8 blocks in 8 root tiles) built on every
// GPU of the host (two streams of cuda:0 when there is one GPU) against the one-GPU build of the same host points
// measured in the same run (upload, pointsToGridAsync, stream sync), and the two grids compared byte for byte.
// HS_BENCH_DIST_POINTS=1e7 limits the sizes (default 1e7 and 1e8).
import { DeviceResource, GridType, ResourceBuffer, distributedPointsToGrid, pointsToGridAsync, type MemoryBlock } from '@hs/nanovdb-mr';
import { Device, unwrap, type CudaBackend, type Stream } from '@hs/streams';

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const ms = (ns: number): string => (ns / 1e6).toFixed(ns >= 1e8 ? 0 : 2);

/**
 * World positions (voxel size 1) in 8 uniform blocks of about one point per 8 voxels, each block in its own root tile
 * (4096 voxels apart along x): a scene wider than one upper node, which the split can spread over the devices (a
 * cloud inside one root tile builds on one device).
 */
function cloud(n: number): Float32Array {
  let x = 3;
  const out = new Float32Array(3 * n);
  const side = Math.cbrt(n);
  for (let i = 0; i < 3 * n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out[i] = (x / 4294967296) * side + (i % 3 === 0 ? 4096 * Math.floor((8 * i) / (3 * n)) : 0);
  }
  return out;
}

async function readBack(backend: CudaBackend, stream: Stream, data: MemoryBlock, size: number): Promise<Uint8Array> {
  const bytes = new Uint8Array(size);
  unwrap(backend.copyToHostAsync(stream, bytes, data));
  await backend.synchronizeStream(stream);
  return bytes;
}

/** Runs the measurements and returns the table lines. */
export async function benchDistributedPointsToGrid(backend: CudaBackend): Promise<string[]> {
  const sizes = (process.env.HS_BENCH_DIST_POINTS ?? '1e7,1e8').split(',').map(Number);
  const devices = backend.devices.length >= 2 ? backend.devices.slice() : [Device.cuda(0), Device.cuda(0)];
  const streams = devices.map((d) => unwrap(backend.createStream(d, { label: `distributed ${d.toString()}` })));
  const resources = devices.map((d) => new DeviceResource(backend, d));
  const stream = streams[0] as Stream;
  const resource = resources[0] as DeviceResource;
  const options = { gridType: GridType.OnIndex, voxelSize: 1 } as const;
  const lines = [
    `| points | devices | one-GPU build (upload + pointsToGridAsync) | distributedPointsToGrid | distributed / one GPU | bytes identical |`,
    '|---|---|---|---|---|---|',
  ];
  for (const n of sizes) {
    const positions = cloud(n);
    const oneNs: number[] = [];
    const distNs: number[] = [];
    let identical = false;
    for (let round = 0; round < 3; round++) {
      const t0 = process.hrtime.bigint();
      const input = unwrap(ResourceBuffer.allocateAsync(backend, stream, resource, 3 * n, { noInit: true, element: Float32Array }));
      unwrap(backend.copyFromHostAsync(stream, input.data as MemoryBlock, new Uint8Array(positions.buffer)));
      const one = await pointsToGridAsync(backend, stream, resource, { space: 'world', positions: input }, options);
      await backend.synchronizeStream(stream);
      oneNs.push(Number(process.hrtime.bigint() - t0));
      input.dispose();
      const t1 = process.hrtime.bigint();
      const dist = await distributedPointsToGrid(backend, { space: 'world', positions }, streams, resources, options);
      await backend.synchronizeStream(stream);
      distNs.push(Number(process.hrtime.bigint() - t1));
      if (round === 2) {
        const a = await readBack(backend, stream, one.buffer.data as MemoryBlock, one.gridSize);
        const b = await readBack(backend, stream, dist.buffer.data as MemoryBlock, dist.gridSize);
        identical = a.length === b.length && a.every((v, i) => v === b[i]);
      }
      one.buffer.dispose();
      dist.buffer.dispose();
    }
    const a = median(oneNs.slice(1));
    const b = median(distNs.slice(1));
    lines.push(`| ${n.toExponential(0)} | ${devices.map(String).join(', ')} | ${ms(a)} ms | ${ms(b)} ms | ${(b / a).toFixed(2)} | ${identical} |`);
  }
  for (const s of streams) await backend.synchronizeStream(s);
  for (const s of streams) unwrap(backend.destroyStream(s));
  return lines;
}
