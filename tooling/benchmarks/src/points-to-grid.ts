import { HostBackend, unwrap } from '@hs/streams';
import { GridType, HostResource, pointsToGrid } from '@hs/nanovdb-mr';

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

/** Builds the grid `repeats` times and sorts the packed keys as often; reports the best of each. */
export function measurePointsToGrid(n: number, distribution: 'uniform' | 'clustered', repeats = 3): PointsToGridFigures {
  const coords = makePoints(n, distribution);
  const backend = new HostBackend();
  const resource = new HostResource(backend);
  let build = Infinity;
  let activeVoxels = 0;
  for (let k = 0; k < repeats; k++) {
    const t0 = process.hrtime.bigint();
    const handle = unwrap(pointsToGrid(backend, resource, { space: 'index', coords }, { gridType: GridType.OnIndex, checksum: 'disabled' }));
    build = Math.min(build, Number(process.hrtime.bigint() - t0));
    activeVoxels = handle.grid()?.voxelCount ?? 0;
    handle.dispose();
  }
  const keys = new Float64Array(n);
  let sort = Infinity;
  for (let k = 0; k < repeats; k++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      keys[i] = ((coords[3 * i] as number) + 65536) * 2 ** 34 + ((coords[3 * i + 1] as number) + 65536) * 2 ** 17 + ((coords[3 * i + 2] as number) + 65536);
    }
    keys.sort();
    sort = Math.min(sort, Number(process.hrtime.bigint() - t0));
  }
  backend.dispose();
  return { points: n, distribution, activeVoxels, buildPointsPerSecond: n / (build / 1e9), sortPointsPerSecond: n / (sort / 1e9) };
}
