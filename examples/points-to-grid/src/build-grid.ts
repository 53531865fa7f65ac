import { dirname } from 'node:path';
import { HostBackend, ok, unwrap, writeFileAtomicSync, type Result } from '@hs/streams';
import { createOutputDirectory } from '@hs/runtime';
import { GridType, HostResource, StatisticsResource, pointsToGrid, writeNvdb, type NvdbCodec } from '@hs/nanovdb-mr';
import type { PointCloud } from '@hs/example-point-cloud-input';

/** What `buildGrid` is asked for. */
export interface BuildRequest {
  readonly cloud: PointCloud;
  /** World units per voxel. */
  readonly voxelSize: number;
  /** Where the `.nvdb` file goes. */
  readonly output: string;
  readonly codec: NvdbCodec;
  /** The most bytes the grid may take (`--max-grid-bytes`): a larger grid is refused before anything is allocated. */
  readonly maxGridBytes: number;
}

/**
 * Creates the output's folder (`createOutputDirectory` of @hs/runtime, before any grid is built), builds an
 * OnIndex grid from the cloud on the host, every byte (scratch and grid) through a `StatisticsResource` over
 * a `HostResource`, and writes it as `.nvdb`. The grid and backend are released on every path.
 * @returns the report lines: grid statistics, then allocation statistics once everything was returned.
 * @throws HsError (the promise rejects) `InvalidArgument` `--out: cannot create <folder>: <code>` when the
 *   folder cannot be made (a parent under `/proc`, a file in the way); the errors of `pointsToGrid` (among them
 *   InvalidArgument naming the grid's bytes and the cap for a grid above `maxGridBytes`, nothing allocated) and
 *   `writeNvdb`; `writeFileAtomicSync`'s when the file cannot be written (a directory, a full device, a symlinked folder).
 */
export async function buildGrid(request: BuildRequest): Promise<string[]> {
  await createOutputDirectory(dirname(request.output), '--out');
  const backend = new HostBackend();
  const stats = new StatisticsResource(new HostResource(backend));
  const lines: string[] = [];
  const n = request.cloud.positions.length / 3;
  lines.push(`points: ${n} from ${request.cloud.source}`);
  stats.pushCounters();
  const built = pointsToGrid(backend, stats, { space: 'world', positions: request.cloud.positions }, {
    gridType: GridType.OnIndex,
    voxelSize: request.voxelSize,
    name: 'points',
    maxGridBytes: request.maxGridBytes,
  });
  if (!built.ok) {
    backend.dispose();
    throw built.error;
  }
  const handle = built.value;
  const grid = handle.grid(0)!;
  const [leaves, lowers, uppers] = grid.nodeCount;
  lines.push(`grid "${grid.name}": OnIndex, voxel size ${request.voxelSize}, ${grid.voxelCount} active voxels, ${grid.gridSize} bytes`);
  lines.push(`nodes: ${uppers} upper, ${lowers} lower, ${leaves} leaves; checksum 0x${grid.checksum.head.toString(16)}/0x${grid.checksum.tail.toString(16)}`);
  lines.push(`index bbox: [${grid.indexBBox.min.join(', ')}] .. [${grid.indexBBox.max.join(', ')}]`);
  lines.push(`world bbox: [${grid.worldBBox.min.map((c) => c.toFixed(3)).join(', ')}] .. [${grid.worldBBox.max.map((c) => c.toFixed(3)).join(', ')}]`);
  const file = writeNvdb(handle, request.codec);
  handle.dispose();
  const written = file.ok ? writeOutput(request.output, file.value) : file;
  const build = stats.popCounters();
  backend.dispose();
  lines.push(`wrote ${request.output} (${unwrap(written)} bytes, codec ${request.codec})`);
  const { bytes, allocations } = unwrap(build);
  lines.push(`allocations through the resource: ${allocations.total} (${allocations.current} outstanding), peak ${bytes.peak} bytes, total ${bytes.total} bytes, ${bytes.current} bytes outstanding`);
  return lines;
}

/**
 * Writes `bytes` to `path` (its folder exists) with `writeFileAtomicSync` of @hs/streams: a staging file
 * beside it renamed onto it, so a symlink planted at `path` is replaced, never written through, and a
 * symlinked folder is refused. The byte count, or that call's error.
 */
function writeOutput(path: string, bytes: Uint8Array): Result<number> {
  const written = writeFileAtomicSync(path, bytes);
  return written.ok ? ok(bytes.length) : written;
}
