// Every NanoVDB 32.9 grid type, read from files NanoVDB itself wrote (test/fixtures/nanovdb, made by
// make-nanovdb-fixtures.sh), value for value against what NanoVDB's accessor read at the same coordinates.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ErrorCode, unwrap } from '@hs/streams';
import { GridAccessor, GridType, decodeNvdb, encodeNvdb, validateGrids } from '../../src/index.js';
import { valueLayoutOf } from '../../src/nanovdb/grid/grid-layout.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/nanovdb');

type Json = number | string | boolean | Json[];
interface Expected {
  readonly gridType: number;
  readonly gridClass: number;
  readonly name: string;
  readonly voxelCount: number;
  readonly background: Json;
  readonly samples: readonly [number, number, number, boolean, Json][];
}

/** Fixture name -> how NanoVDB printed its values: f32 (9 digits), exact (doubles, integers), big (64-bit as strings), vector, bool. */
const TYPES = {
  float: 'f32', double: 'exact', int16: 'exact', int32: 'exact', int64: 'big', uint32: 'exact', uint8: 'exact', half: 'f32',
  vec3f: 'vector', vec3d: 'vector', vec4f: 'vector', vec4d: 'vector', rgba8: 'vector',
  mask: 'bool', boolean: 'bool', fp4: 'f32', fp8: 'f32', fp16: 'f32', fpn: 'f32', index: 'big', onindex: 'big', pointdata: 'exact',
} as const;

function load(name: string): { file: Uint8Array; bytes: Uint8Array; expected: Expected } {
  const file = new Uint8Array(readFileSync(join(FIXTURES, `${name}.nvdb`)));
  const [segment] = unwrap(decodeNvdb(file));
  return { file, bytes: segment!.bytes, expected: JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8')) as Expected };
}

const asNumber = (j: Json): number => (j === 'Infinity' ? Infinity : j === '-Infinity' ? -Infinity : typeof j === 'boolean' ? (j ? 1 : 0) : Number(j));

function vectorOut(gridType: GridType): Float32Array | Float64Array | Uint8Array {
  return gridType === GridType.RGBA8 ? new Uint8Array(4) : gridType === GridType.Vec3d || gridType === GridType.Vec4d ? new Float64Array(4) : new Float32Array(4);
}

describe.each(Object.entries(TYPES))('NanoVDB-written %s grid', (name, printed) => {
  const { file, bytes, expected } = load(name);

  it('validates and reports NanoVDB metadata', () => {
    const [g] = unwrap(validateGrids(bytes));
    expect(g).toMatchObject({ gridType: expected.gridType, gridClass: expected.gridClass, name: expected.name, voxelCount: expected.voxelCount });
  });

  it('reads every sampled voxel as NanoVDB does', () => {
    const [g] = unwrap(validateGrids(bytes));
    const acc = new GridAccessor(bytes, g!);
    const out = vectorOut(g!.gridType);
    const read = (x: number, y: number, z: number): Json => {
      if (printed === 'vector') return [...acc.getVector(x, y, z, out).subarray(0, acc.components)];
      if (printed === 'big') return String(acc.getBigValue(x, y, z));
      return acc.getValue(x, y, z);
    };
    const want = (j: Json): Json => (printed === 'vector' ? (j as Json[]).map((c) => (out instanceof Float32Array ? Math.fround(asNumber(c)) : asNumber(c))) : printed === 'big' ? String(j) : printed === 'f32' ? Math.fround(asNumber(j)) : asNumber(j));
    if (printed === 'vector') expect([...acc.getBackgroundVector(out).subarray(0, acc.components)]).toEqual(want(expected.background));
    else if (printed !== 'big') expect(acc.background).toBe(want(expected.background));
    for (const [x, y, z, active, value] of expected.samples) {
      expect({ at: [x, y, z], active: acc.isActive(x, y, z), value: read(x, y, z) }).toEqual({ at: [x, y, z], active, value: want(value) });
    }
    let visited = 0;
    acc.forEachActiveVoxel(() => visited++);
    expect(visited).toBe(expected.voxelCount);
  });

  it('writes the grid back byte for byte (decode, encode, decode)', () => {
    const [g] = unwrap(validateGrids(bytes));
    for (const codec of ['none', 'zip'] as const) {
      const again = unwrap(decodeNvdb(unwrap(encodeNvdb(bytes, [g!], codec))));
      expect(Buffer.from(again[0]!.bytes).equals(Buffer.from(bytes))).toBe(true);
    }
  });

  it('a truncated file or grid gives a typed error naming the field', () => {
    const cut = decodeNvdb(file.subarray(0, file.length - 40));
    expect(cut.ok).toBe(false);
    if (!cut.ok) expect(cut.error.message).toMatch(/payload\[0\]|meta\[0\]\.fileSize/);
    const grid = validateGrids(bytes.subarray(0, bytes.length - 32));
    expect(grid.ok).toBe(false);
    if (!grid.ok) expect([grid.error.code, grid.error.message]).toEqual([ErrorCode.InvalidArgument, expect.stringContaining('gridSize:')]);
  });

  it('a corrupt grid class or leaf pointer gives a typed error naming the field', () => {
    const badClass = bytes.slice();
    new DataView(badClass.buffer).setUint32(632, 11, true);
    const r = validateGrids(badClass, { checksum: false });
    expect(r.ok ? '' : r.error.message).toContain('gridClass:');
    // the first lower node's first child: point it 32 bytes past its leaf (not a node start)
    const [g] = unwrap(validateGrids(bytes));
    const damaged = bytes.slice();
    const v = new DataView(damaged.buffer);
    const lower = 672 + Number(v.getBigInt64(672 + 8, true));
    const layoutTable = lower + lowerTableOf(g!.gridType);
    let entry = 0;
    while ((damaged[lower + 544 + (entry >> 3)]! & (1 << (entry & 7))) === 0) entry++;
    const stride = lowerStrideOf(g!.gridType);
    v.setBigInt64(layoutTable + stride * entry, v.getBigInt64(layoutTable + stride * entry, true) + 32n, true);
    const bad = validateGrids(damaged, { checksum: false });
    expect(bad.ok ? '' : bad.error.message).toContain(`lower[0].table[${entry}]: child offset does not point at a node`);
  });
});

// Lower-node table offsets and strides per value size (NanoVDB: the table entry is the larger of the value and 8 bytes).
function lowerTableOf(t: GridType): number {
  return t === GridType.Vec3d ? 1120 : t === GridType.Vec4f ? 1120 : t === GridType.Vec4d ? 1152 : 1088;
}
function lowerStrideOf(t: GridType): number {
  return t === GridType.Vec3f || t === GridType.Vec4f ? 16 : t === GridType.Vec3d ? 24 : t === GridType.Vec4d ? 32 : 8;
}

describe('value layouts derived per type', () => {
  // Sizes and offsets of NanoVDB 32.9's structs (sizeof/offsetof of RootData, its Tile, InternalData and LeafData per
  // build type): [root background, RootData, tile value, tile, upper table, upper node, lower table, lower node, leaf].
  it.each([
    [GridType.Float, [28, 64, 20, 32, 8256, 270400, 1088, 33856, 2144]],
    [GridType.Double, [32, 96, 24, 32, 8256, 270400, 1088, 33856, 4224]],
    [GridType.Half, [28, 64, 20, 32, 8256, 270400, 1088, 33856, 1120]],
    [GridType.Vec3f, [28, 96, 20, 32, 8256, 532544, 1088, 66624, 6272]],
    [GridType.Vec3d, [32, 128, 24, 64, 8288, 794720, 1120, 99424, 12448]],
    [GridType.Vec4d, [32, 160, 24, 64, 8320, 1056896, 1152, 132224, 16544]],
    [GridType.Mask, [28, 64, 20, 32, 8256, 270400, 1088, 33856, 96]],
    [GridType.Boolean, [28, 64, 20, 32, 8256, 270400, 1088, 33856, 160]],
    [GridType.Fp4, [28, 64, 20, 32, 8256, 270400, 1088, 33856, 352]],
    [GridType.PointIndex, [32, 96, 24, 32, 8256, 270400, 1088, 33856, 1120]],
    [GridType.UInt8, [28, 64, 20, 32, 8256, 270400, 1088, 33856, 608]],
  ])('GridType %i', (gridType, want) => {
    const l = valueLayoutOf(gridType)!;
    expect([l.rootBackground, l.rootDataSize, l.tileValue, l.tileSize, l.upper.table, l.upper.size, l.lower.table, l.lower.size, l.leafSize]).toEqual(want);
  });
});
