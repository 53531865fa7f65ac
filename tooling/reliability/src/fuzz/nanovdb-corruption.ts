import fc from 'fast-check';
import { ErrorCode, HsError, HostBackend, unwrap } from '@hs/streams';
import { GridAccessor, GridType, HostResource, pointsToGrid, validateGrids, type GridMetadata } from '@hs/nanovdb-mr';
import { FUZZ_SEED, checkProperty, type FuzzOutcome } from '../fuzz-settings.js';

/** One corruption step: a byte overwrite, a 32- or 64-bit little-endian field write at an aligned offset, or a cut. */
type Damage =
  | { readonly kind: 'byte'; readonly at: number; readonly value: number }
  | { readonly kind: 'u32' | 'u64'; readonly at: number; readonly value: number }
  | { readonly kind: 'cut'; readonly at: number };

const damage: fc.Arbitrary<Damage> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('byte' as const), at: fc.nat(), value: fc.nat(255) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constantFrom('u32' as const, 'u64' as const), at: fc.nat(), value: fc.oneof(fc.constantFrom(0, 1, 0xffffffff, 0x7fffffff), fc.nat(0xffffffff)) }) },
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
);

const gridCase = fc.record({
  grids: fc.array(
    fc.record({
      float: fc.boolean(),
      coords: fc.array(fc.tuple(fc.integer({ min: -5000, max: 5000 }), fc.integer({ min: -300, max: 300 }), fc.integer({ min: -5000, max: 5000 })), { minLength: 1, maxLength: 60 }),
    }),
    { minLength: 1, maxLength: 2 },
  ),
  damage: fc.array(damage, { minLength: 1, maxLength: 6 }),
  checksum: fc.boolean(),
});

/** Builds a valid chain of grids with the library's own builder and concatenates their bytes. */
function buildChain(backend: HostBackend, resource: HostResource, grids: readonly { float: boolean; coords: readonly (readonly [number, number, number])[] }[]): Uint8Array {
  const parts = grids.map((g, i) => {
    const handle = unwrap(
      pointsToGrid(backend, resource, { space: 'index', coords: new Int32Array(g.coords.flat()) }, { gridType: g.float ? GridType.Float : GridType.OnIndex, name: `fuzz${i}` }),
    );
    const bytes = unwrap(handle.hostBytes()).slice();
    handle.dispose();
    return bytes;
  });
  if (parts.length === 1) return parts[0]!;
  // A chain must carry gridIndex/gridCount; a plain concatenation of two single grids is itself a corruption.
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return all;
}

function applyDamage(bytes: Uint8Array, steps: readonly Damage[]): Uint8Array {
  let out = bytes.slice();
  for (const step of steps) {
    if (out.length === 0) break;
    const at = step.at % out.length;
    if (step.kind === 'cut') out = out.slice(0, at);
    else if (step.kind === 'byte') out[at] = step.value;
    else {
      const aligned = at - (at % 4);
      const view = new DataView(out.buffer, out.byteOffset, out.length);
      if (aligned + 4 <= out.length) view.setUint32(aligned, step.value, true);
      if (step.kind === 'u64' && aligned + 8 <= out.length) view.setUint32(aligned + 4, step.value & 1 ? 0xffffffff : 0, true);
    }
  }
  return out;
}

/** Walks everything an accepted grid exposes: active voxels and their values, plus probes outside the bbox. */
function walk(bytes: Uint8Array, metadata: GridMetadata): number {
  const accessor = new GridAccessor(bytes, metadata);
  let visited = 0;
  accessor.forEachActiveVoxel((x, y, z) => {
    accessor.getValue(x, y, z);
    visited += 1;
  });
  accessor.getValue(1 << 20, -(1 << 20), 7);
  accessor.isActive(-1, -1, -1);
  return visited;
}

/**
 * Fuzzes NanoVDB validation with random corruption of valid grids (extends the nanovdb-mr suite, which
 * damages one fixed grid with checksums off): grids built by `pointsToGrid` from random points (Float and
 * OnIndex, chains of two), then byte overwrites, aligned 32/64-bit field writes anywhere (node data included)
 * and cuts, validated with and without checksums. `validateGrids` must never throw and fail only with
 * InvalidArgument or NotSupported; an undamaged single grid must validate; and whatever it accepts must be safe to
 * traverse: walking every active voxel and probing values never throws.
 */
export function fuzzNanoVdbCorruption(runs: number, seed: number = FUZZ_SEED): FuzzOutcome {
  const backend = new HostBackend();
  const resource = new HostResource(backend);
  let refused = 0;
  let acceptedAndWalked = 0;
  const property = fc.property(gridCase, (c) => {
    const clean = buildChain(backend, resource, c.grids);
    if (c.grids.length === 1 && !validateGrids(clean).ok) throw new Error('a grid straight from the builder did not validate');
    const bytes = applyDamage(clean, c.damage);
    let result;
    try {
      result = validateGrids(bytes, { checksum: c.checksum });
    } catch (thrown) {
      throw new Error(`validateGrids threw: ${thrown instanceof Error ? thrown.message : String(thrown)}`);
    }
    if (!result.ok) {
      if (!(result.error instanceof HsError) || (result.error.code !== ErrorCode.InvalidArgument && result.error.code !== ErrorCode.NotSupported)) {
        throw new Error(`unexpected error ${result.error.message}`);
      }
      refused += 1;
      return;
    }
    for (const metadata of result.value) {
      try {
        walk(bytes, metadata);
      } catch (thrown) {
        throw new Error(`traversing an accepted grid threw: ${thrown instanceof Error ? thrown.message : String(thrown)}`);
      }
    }
    acceptedAndWalked += 1;
  });
  try {
    return checkProperty('NanoVDB validation (random corruption of valid grids)', property, runs, seed, () => `${refused} refused with typed errors, ${acceptedAndWalked} accepted and traversed safely`);
  } finally {
    backend.dispose();
  }
}
