// A point cloud with an intensity per point becomes NanoVDB grids through a resource you can see: the mean
// intensity per voxel as a Float grid, the point count per voxel in a sidecar channel of an OnIndex grid (the
// index-grid-plus-values model), a .nvdb file written and read back, and the channel handed on as a DLPack tensor.
// `pnpm test` runs it on the host backend (docs/test/examples-run.test.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GridType, HostResource, StatisticsResource, channelDLPack, pointAttributesToGrid, readNvdbFile, writeNvdbFile } from '@hs/nanovdb-mr';
import { HostBackend, unwrap } from '@hs/streams';
import { importDLPack } from '@hs/tensor';

const backend = new HostBackend();
const resource = new StatisticsResource(new HostResource(backend)); // every byte the builders take, counted

// 2000 points on a sphere of radius 2 (world units), intensity rising with height
const n = 2000;
const positions = new Float32Array(3 * n);
const intensity = new Float32Array(n);
for (let i = 0; i < n; i++) {
  const z = 1 - (2 * (i + 0.5)) / n;
  const r = Math.sqrt(1 - z * z);
  const phi = i * 2.399963229728653; // the golden angle spreads the points evenly
  positions.set([2 * r * Math.cos(phi), 2 * r * Math.sin(phi), 2 * z], 3 * i);
  intensity[i] = 0.5 + 0.5 * z;
}
const points = { space: 'world', positions } as const;

// the mean intensity of the points in each voxel of 0.25 world units
const mean = unwrap(pointAttributesToGrid(backend, resource, points, { values: intensity, channels: 1, reduction: 'mean' }, { gridType: GridType.Float, voxelSize: 0.25, name: 'intensity' }));
const density = mean.accessor(0);
if (!density.ok) throw density.error;
console.log(`mean intensity: ${mean.grid(0)?.voxelCount} voxels, the top one holds ${density.value.getValue(0, 0, 8).toFixed(3)}`);

// the same voxels as an OnIndex grid, each voxel's point count in the sidecar channel 'count'
const counted = unwrap(pointAttributesToGrid(backend, resource, points, { values: intensity, channels: 1, reduction: 'count' }, { gridType: GridType.OnIndex, channel: { name: 'count', type: GridType.Int32 }, voxelSize: 0.25 }));
const exported = unwrap(channelDLPack(counted, 'count')); // slot 0 is the background, then one value per active voxel
const channel = unwrap(importDLPack(exported.managed, { backend, memory: exported.memory, name: 'count channel' }));
const counts = new Int32Array(unwrap(channel.hostView()).slice().buffer);
console.log(`count channel: an hs Tensor [${channel.shape}] of ${channel.dtype}, ${counts.reduce((a, b) => a + b, 0)} points in all`);
channel.dispose(); // the last holder: the export's deleter runs

// a .nvdb file holding both grids, read back (validated, checksums checked) into the same resource
const dir = mkdtempSync(join(tmpdir(), 'hs-volume-'));
try {
  await writeNvdbFile(join(dir, 'cloud.nvdb'), [mean, counted], 'zip');
  const grids = await readNvdbFile(backend, resource, join(dir, 'cloud.nvdb'));
  console.log(`read back: ${grids.map((g) => `${g.grid(0)?.name || '(unnamed)'} ${GridType[g.grid(0)?.gridType ?? -1]}`).join(', ')}`);
  for (const grid of grids) grid.dispose();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
mean.dispose();
counted.dispose();
console.log(`resource: ${resource.statistics.allocations.total} allocations, ${resource.statistics.bytes.current} bytes outstanding`);
backend.dispose();
