/**
 * The clouds of the grid byte-identity test (`test/nanovdb/grid-bytes-identity.test.ts`): several hundred point
 * clouds of many sizes, spreads (one leaf, across zero, across root tiles, the index range ends), duplicate rates
 * and value types, each built by one host builder. The SHA-256 of every grid was recorded in
 * `test/fixtures/nanovdb/grid-bytes-identity.json` with the builders before the packed-key sort and the flat writer,
 * so a change in any byte of any grid fails the test. Regenerate only for an intended format change:
 * `tsx test/support/byte-identity-clouds.ts > test/fixtures/nanovdb/grid-bytes-identity.json` (from this package).
 */
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { HostBackend, type Result } from '@hs/streams';
import { GridType, HostResource, pointAttributesToGrid, pointsToGrid, validateGrids, voxelsToGrid } from '@hs/nanovdb-mr';
import type { GridHandle } from '@hs/nanovdb-mr';
import { seededRandom } from '../../src/test/seeded-random.js';


type Spread = 'leaf' | 'node' | 'zero' | 'tiles' | 'wide' | 'ends' | 'clustered';
const SPREADS: readonly Spread[] = ['leaf', 'node', 'zero', 'tiles', 'wide', 'ends', 'clustered'];
const SIZES = [0, 1, 2, 5, 31, 200, 1500] as const;

/** `n` index points of one spread; about a quarter repeat an earlier point when `duplicates`. */
export function cloud(n: number, spread: Spread, seed: number, duplicates: boolean): Int32Array {
  const r = seededRandom(seed);
  const coords = new Int32Array(3 * n);
  const ends = [-2147483648, -2147483647, -4097, -4096, -1, 0, 4095, 4096, 2147483646, 2147483647];
  const centers = Array.from({ length: 5 }, () => [r() * 20000 - 10000, r() * 20000 - 10000, r() * 20000 - 10000]);
  for (let i = 0; i < n; i++) {
    if (duplicates && i > 0 && r() < 0.25) {
      const j = Math.floor(r() * i);
      coords.copyWithin(3 * i, 3 * j, 3 * j + 3);
      continue;
    }
    for (let a = 0; a < 3; a++) {
      let c: number;
      switch (spread) {
        case 'leaf':
          c = 8 * 37 + Math.floor(r() * 8);
          break;
        case 'node':
          c = 5000 + Math.floor(r() * 300);
          break;
        case 'zero':
          c = Math.floor(r() * 1024) - 512;
          break;
        case 'tiles':
          c = Math.floor(r() * 30000) - 15000;
          break;
        case 'wide':
          c = Math.floor(r() * 4_000_000_000) - 2_000_000_000;
          break;
        case 'ends':
          c = r() < 0.5 ? (ends[Math.floor(r() * ends.length)] as number) : Math.floor(r() * 64) - 32;
          break;
        default: {
          const center = centers[i % centers.length] as number[];
          c = Math.round((center[a] as number) + 40 * Math.sqrt(-2 * Math.log(r() + 1e-12)) * Math.cos(2 * Math.PI * r()));
        }
      }
      coords[3 * i + a] = c;
    }
  }
  return coords;
}

/** One case: its label and how it builds its grid. */
export interface ByteCase {
  readonly label: string;
  build(backend: HostBackend, resource: HostResource): Result<GridHandle>;
}

/** Distinct voxels of `coords` in first-seen order. */
function unique(coords: Int32Array): Int32Array {
  const seen = new Set<string>();
  const out: number[] = [];
  for (let i = 0; i < coords.length; i += 3) {
    const key = `${coords[i]},${coords[i + 1]},${coords[i + 2]}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(coords[i] as number, coords[i + 1] as number, coords[i + 2] as number);
  }
  return Int32Array.from(out);
}

/** Every case, in a fixed order. */
export function byteCases(): ByteCase[] {
  const cases: ByteCase[] = [];
  let seed = 1;
  for (const n of SIZES) {
    for (const spread of SPREADS) {
      for (const duplicates of [false, true]) {
        seed++;
        if (n > 200 && (spread === 'wide' || spread === 'ends')) continue; // one root tile (a 256 KiB upper node) per point
        const coords = cloud(n, spread, seed, duplicates);
        const tag = `${n} ${spread}${duplicates ? ' dup' : ''}`;
        cases.push({ label: `index OnIndex ${tag}`, build: (b, r) => pointsToGrid(b, r, { space: 'index', coords }, { gridType: GridType.OnIndex, checksum: 'full' }) });
        cases.push({
          label: `index Float ${tag}`,
          build: (b, r) => pointsToGrid(b, r, { space: 'index', coords }, { gridType: GridType.Float, background: duplicates ? 2.5 : 0, checksum: 'partial' }),
        });
        if (spread === 'wide' || spread === 'ends') continue; // world positions of these overflow the index range once scaled
        const f32 = Float32Array.from(coords, (c, i) => c * 0.25 + (i % 3) * 0.01);
        const f64 = Float64Array.from(coords, (c, i) => c * 0.3 - (i % 3) * 0.02);
        cases.push({
          label: `world32 OnIndex ${tag}`,
          build: (b, r) => pointsToGrid(b, r, { space: 'world', positions: f32 }, { gridType: GridType.OnIndex, voxelSize: 0.5, origin: [0.1, -0.2, 0.3], name: 'w32', checksum: 'full' }),
        });
        cases.push({
          label: `world64 Float ${tag}`,
          build: (b, r) => pointsToGrid(b, r, { space: 'world', positions: f64 }, { gridType: GridType.Float, voxelSize: 0.3, checksum: 'disabled' }),
        });
        const values = Float32Array.from({ length: n }, (_, i) => Math.sin(i) * 10);
        const channelType = [GridType.Float, GridType.Double, GridType.Int32][seed % 3] as GridType.Float | GridType.Double | GridType.Int32;
        cases.push({
          label: `attributes ${GridType[channelType]} mean ${tag}`,
          build: (b, r) => pointAttributesToGrid(b, r, { space: 'index', coords }, { values, channels: 1, reduction: 'mean' }, { gridType: channelType }),
        });
        cases.push({
          label: `attributes OnIndex channel max ${tag}`,
          build: (b, r) =>
            pointAttributesToGrid(b, r, { space: 'index', coords }, { values, channels: 1, reduction: 'max' }, { gridType: GridType.OnIndex, channel: { name: 'v', type: GridType.Float } }),
        });
        const voxels = unique(coords);
        const m = voxels.length / 3;
        const vec = Float32Array.from({ length: 3 * m }, (_, i) => i * 0.5 - 3);
        const rgba = Uint8Array.from({ length: 4 * m }, (_, i) => (i * 37) & 255);
        const dbl = Float64Array.from({ length: m }, (_, i) => Math.cos(i) * 1e3);
        const pick = seed % 4;
        cases.push({
          label: `voxels ${['Vec3f', 'RGBA8', 'Double', 'Int32'][pick]} ${tag}`,
          build: (b, r) =>
            pick === 0
              ? voxelsToGrid(b, r, { coords: voxels, values: vec }, { gridType: GridType.Vec3f })
              : pick === 1
                ? voxelsToGrid(b, r, { coords: voxels, values: rgba }, { gridType: GridType.RGBA8 })
                : pick === 2
                  ? voxelsToGrid(b, r, { coords: voxels, values: dbl }, { gridType: GridType.Double, background: -1 })
                  : voxelsToGrid(b, r, { coords: voxels, values: Int32Array.from(dbl, Math.trunc) }, { gridType: GridType.Int32 }),
        });
      }
    }
  }
  return cases;
}

/** The SHA-256 (hex) of a built grid's bytes, or `error: <code>` when the build failed. */
export function caseHash(c: ByteCase, backend: HostBackend, resource: HostResource): string {
  const built = c.build(backend, resource);
  if (!built.ok) return `error: ${built.error.code}`;
  const handle = built.value;
  try {
    const bytes = handle.hostBytes();
    if (!bytes.ok) return `error: ${bytes.error.code}`;
    // the builders do not validate their own grids (the trusted path): validate here, checksum included, and hold the
    // handle's metadata to what validation reads
    const checked = validateGrids(bytes.value);
    if (!checked.ok) return `invalid: ${checked.error.message}`;
    if (!isDeepStrictEqual(checked.value, [handle.grid()])) return 'the handle metadata differs from validateGrids';
    return createHash('sha256').update(bytes.value).digest('hex');
  } finally {
    handle.dispose();
  }
}

if (process.argv[1]?.endsWith('byte-identity-clouds.ts')) {
  const backend = new HostBackend();
  const resource = new HostResource(backend);
  const out: Record<string, string> = {};
  for (const c of byteCases()) out[c.label] = caseHash(c, backend, resource);
  backend.dispose();
  console.log(JSON.stringify(out, null, 1));
}
