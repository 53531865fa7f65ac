import { Device, HostBackend, MemoryKind, unwrap } from '@hs/streams';
import { GridType, HostResource, RegionResource, pointsToGrid } from '@hs/nanovdb-mr';

/** One PointsToGrid measurement against a native sort of the same keys in the same run. */
export interface PointsToGridFigures {
  readonly points: number;
  readonly distribution: 'uniform' | 'clustered';
  readonly activeVoxels: number;
  /** Host pointsToGrid (OnIndex, index space, checksum off), points per second. */
  readonly buildPointsPerSecond: number;
  /** Baseline: `Float64Array.prototype.sort` of one packed voxel key per point, points per second. */
  readonly sortPointsPerSecond: number;
}

/** A small deterministic generator (xorshift32) so both distributions repeat run to run. */
function random(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 2 ** 32;
  };
}

/** Index-space points: uniform in a 1024^3 cube, or 64 Gaussian clusters (sigma 24 voxels) in it. */
export function makePoints(n: number, distribution: 'uniform' | 'clustered'): Int32Array {
  const r = random(n ^ (distribution === 'uniform' ? 0x1234 : 0x5678));
  const coords = new Int32Array(3 * n);
  const centers = Array.from({ length: 64 }, () => [r() * 1024 - 512, r() * 1024 - 512, r() * 1024 - 512]);
  for (let i = 0; i < n; i++) {
    if (distribution === 'uniform') {
      for (let a = 0; a < 3; a++) coords[3 * i + a] = Math.floor(r() * 1024) - 512;
    } else {
      const c = centers[i & 63] as number[];
      for (let a = 0; a < 3; a++) {
        const g = Math.sqrt(-2 * Math.log(r() + 1e-12)) * Math.cos(2 * Math.PI * r());
        coords[3 * i + a] = Math.round((c[a] as number) + 24 * g);
      }
    }
  }
  return coords;
}

/** The packed voxel key the baseline sorts: one Float64 per point. */
function packKeys(coords: Int32Array, keys: Float64Array): void {
  for (let i = 0; i < keys.length; i++) {
    keys[i] = ((coords[3 * i] as number) + 65536) * 2 ** 34 + ((coords[3 * i + 1] as number) + 65536) * 2 ** 17 + ((coords[3 * i + 2] as number) + 65536);
  }
}

/**
 * Builds the grid `repeats` times and sorts the packed keys as often, the two alternating (a build, then a sort)
 * so load on the machine hits both alike; reports the best of each. With `reuse` the build's workspace and grid
 * come from a `RegionResource` over one host allocation made before the first build, so every build after the
 * first writes memory already paged in (a caller that keeps its memory between builds); without it from a
 * `HostResource` (fresh memory every build, its page faults included).
 */
export function measurePointsToGrid(n: number, distribution: 'uniform' | 'clustered', repeats = 3, reuse = false): PointsToGridFigures {
  const coords = makePoints(n, distribution);
  const backend = new HostBackend();
  // workspace (40 B/point + 257 KiB) and the grid (at most ~100 B/point for these clouds), with room for alignment
  const memory = reuse ? unwrap(backend.allocate({ kind: MemoryKind.Host, device: Device.cpu(), byteSize: 160 * n + (8 << 20) })) : null;
  const resource = memory === null ? new HostResource(backend) : new RegionResource({ memory, byteOffset: 0, byteLength: memory.byteSize, label: 'p2g bench' });
  const keys = new Float64Array(n);
  let build = Infinity;
  let sort = Infinity;
  let activeVoxels = 0;
  // one build and one sort before timing: the first build through the region pages its memory in
  for (let k = 0; k <= repeats; k++) {
    const t0 = process.hrtime.bigint();
    const handle = unwrap(pointsToGrid(backend, resource, { space: 'index', coords }, { gridType: GridType.OnIndex, checksum: 'disabled' }));
    const t1 = process.hrtime.bigint();
    activeVoxels = handle.grid()?.voxelCount ?? 0;
    handle.dispose();
    const t2 = process.hrtime.bigint();
    packKeys(coords, keys);
    keys.sort();
    const t3 = process.hrtime.bigint();
    if (k === 0 && reuse) continue;
    build = Math.min(build, Number(t1 - t0));
    sort = Math.min(sort, Number(t3 - t2));
  }
  if (memory !== null) unwrap(backend.free(memory));
  backend.dispose();
  return { points: n, distribution, activeVoxels, buildPointsPerSecond: n / (build / 1e9), sortPointsPerSecond: n / (sort / 1e9) };
}
