// voxelsToGrid writes every plain, vector, Mask and Boolean grid type: built from the voxels and values of the
// NanoVDB-written fixtures, each grid reads back what NanoVDB read from its own grid at every sampled coordinate.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ErrorCode, HostBackend, unwrap } from '@hs/streams';
import { GridClass, GridType, HostResource, decodeNvdb, encodeNvdb, validateGrids, voxelsToGrid, type ValueGridType } from '../../src/index.js';
import { storedNaNs } from './stored-nans.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/nanovdb');
const backend = new HostBackend();
const resource = new HostResource(backend);
type Json = number | string | boolean | Json[];
const asNumber = (j: Json): number => (j === 'Infinity' ? Infinity : j === '-Infinity' ? -Infinity : typeof j === 'boolean' ? (j ? 1 : 0) : Number(j));

const BUILT: Record<string, ValueGridType> = {
  float: GridType.Float, double: GridType.Double, int16: GridType.Int16, int32: GridType.Int32, int64: GridType.Int64,
  uint32: GridType.UInt32, uint8: GridType.UInt8, half: GridType.Half, vec3f: GridType.Vec3f, vec3d: GridType.Vec3d,
  vec4f: GridType.Vec4f, vec4d: GridType.Vec4d, rgba8: GridType.RGBA8, mask: GridType.Mask, boolean: GridType.Boolean,
};

describe.each(Object.entries(BUILT))('voxelsToGrid %s', (name, gridType) => {
  const expected = JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8')) as { gridClass: number; background: Json; samples: [number, number, number, boolean, Json][] };
  const active = expected.samples.filter((s) => s[3]);
  const coords = new Int32Array(active.flatMap((s) => s.slice(0, 3) as number[]));
  const flat = active.flatMap((s) => (Array.isArray(s[4]) ? s[4] : [s[4]]));
  const values = gridType === GridType.Int64 ? new BigInt64Array(flat.map((j) => BigInt(j as string))) : new Float64Array(flat.map(asNumber));
  const background = Array.isArray(expected.background) ? expected.background.map(asNumber) : gridType === GridType.Int64 ? BigInt(expected.background as string) : asNumber(expected.background);

  it('reads back, at every sample, what NanoVDB read from its own grid of those voxels', () => {
    const handle = unwrap(voxelsToGrid(backend, resource, { coords, values }, { gridType, background, gridClass: expected.gridClass, name }));
    const acc = unwrap(handle.accessor());
    expect(handle.grid()).toMatchObject({ gridType, gridClass: expected.gridClass, voxelCount: active.length, name });
    const out = gridType === GridType.RGBA8 ? new Uint8Array(4) : gridType === GridType.Vec3d || gridType === GridType.Vec4d ? new Float64Array(4) : new Float32Array(4);
    const f32 = [GridType.Float, GridType.Half, GridType.Vec3f, GridType.Vec4f].includes(gridType);
    for (const [x, y, z, isActive, value] of expected.samples) {
      const got = acc.components > 1 ? [...acc.getVector(x, y, z, out).subarray(0, acc.components)] : gridType === GridType.Int64 ? String(acc.getBigValue(x, y, z)) : acc.getValue(x, y, z);
      const want = Array.isArray(value) ? value.map((c) => (f32 ? Math.fround(asNumber(c)) : asNumber(c))) : gridType === GridType.Int64 ? String(value) : f32 ? Math.fround(asNumber(value)) : asNumber(value);
      expect({ at: [x, y, z], active: acc.isActive(x, y, z), value: got }).toEqual({ at: [x, y, z], active: isActive, value: want });
    }
    const again = unwrap(decodeNvdb(unwrap(encodeNvdb(unwrap(handle.hostBytes()), handle.grids, 'zip'))));
    expect(Buffer.from(again[0]!.bytes).equals(Buffer.from(unwrap(handle.hostBytes())))).toBe(true);
    handle.dispose();
  });
});

describe('voxelsToGrid refuses what it cannot write, with InvalidArgument naming the option', () => {
  const coords = new Int32Array([0, 0, 0, 1, 2, 3]);
  it.each([
    ['gridType', { gridType: GridType.OnIndex as unknown as ValueGridType }, undefined],
    ['values', { gridType: GridType.Vec3f }, new Float32Array(4)],
    ['background', { gridType: GridType.Vec3f, background: [1, 2] }, new Float32Array(6)],
    ['gridClass', { gridType: GridType.Int32, gridClass: GridClass.LevelSet }, new Int32Array(2)],
    ['gridClass', { gridType: GridType.Float, gridClass: 11 as GridClass }, new Float32Array(2)],
  ] as const)('%s', (option, opts, values) => {
    const r = voxelsToGrid(backend, resource, { coords, ...(values === undefined ? {} : { values }) }, opts);
    expect(r.ok ? '' : `${r.error.code} ${r.error.message}`).toMatch(new RegExp(`^${ErrorCode.InvalidArgument} .*voxelsToGrid: ${option}`));
  });

  it('a Mask grid needs no values, and a voxel given twice keeps its first value', () => {
    const mask = unwrap(voxelsToGrid(backend, resource, { coords }, { gridType: GridType.Mask }));
    expect([unwrap(mask.accessor()).getValue(1, 2, 3), mask.grid()?.gridClass]).toEqual([1, GridClass.Topology]);
    const twice = unwrap(voxelsToGrid(backend, resource, { coords: new Int32Array([5, 5, 5, 5, 5, 5]), values: new Float32Array([2, 3]) }, { gridType: GridType.Float }));
    expect([unwrap(twice.accessor()).getValue(5, 5, 5), twice.grid()?.voxelCount]).toEqual([2, 1]);
  });

  it('sorts a box wider than 64 key bits (the five-word key) and a narrow one (packed keys) to the same values', () => {
    const far = 2 ** 31 - 1;
    // Wide: voxels at both ends of the 32-bit range on every axis; narrow: the same pattern shrunk into a small box.
    const wide = new Int32Array([far, far, far, -far - 1, -far - 1, -far - 1, 0, 0, 0, far, -far - 1, 7, 0, 0, 0, -5, 9, far]);
    const narrow = wide.map((c) => (c === far ? 40 : c === -far - 1 ? -40 : c));
    const values = new Float32Array([1, 2, 3, 4, 5, 6]);
    for (const voxels of [wide, narrow]) {
      const handle = unwrap(voxelsToGrid(backend, resource, { coords: voxels, values }, { gridType: GridType.Float }));
      const acc = unwrap(handle.accessor());
      const read = [0, 1, 2, 3, 5].map((i) => acc.getValue(voxels[3 * i]!, voxels[3 * i + 1]!, voxels[3 * i + 2]!));
      expect({ read, voxels: handle.grid()?.voxelCount }).toEqual({ read: [1, 2, 3, 4, 6], voxels: 5 }); // (0,0,0) twice keeps its first value
      expect(unwrap(validateGrids(unwrap(handle.hostBytes())))).toHaveLength(1);
      handle.dispose();
    }
  });
});

describe('voxelsToGrid quantizes as NanoVDB does', () => {
  const source = JSON.parse(readFileSync(join(FIXTURES, 'quantized-source.json'), 'utf8')) as { background: number; tolerance: number; voxels: [number, number, number, number][] };
  const coords = new Int32Array(source.voxels.flatMap((s) => s.slice(0, 3)));
  const values = new Float32Array(source.voxels.map((s) => s[3]));

  /** Leaf origin -> [minimum, quantum, codes] of every leaf of the grid. */
  function leaves(bytes: Uint8Array): Map<string, string> {
    const [g] = unwrap(validateGrids(bytes));
    const v = new DataView(bytes.buffer, bytes.byteOffset);
    const out = new Map<string, string>();
    let leaf = 672 + Number(v.getBigInt64(672, true));
    for (let l = 0; l < g!.nodeCount[0]; l++) {
      const bits = g!.gridType === GridType.FpN ? 1 << (v.getUint8(leaf + 15) >> 5) : { [GridType.Fp4]: 4, [GridType.Fp8]: 8, [GridType.Fp16]: 16 }[g!.gridType as GridType.Fp4]!;
      const origin = [0, 4, 8].map((a) => v.getInt32(leaf + a, true) & ~7).join(',');
      out.set(origin, `${bits} bits ${Buffer.from(bytes.subarray(leaf + 80, leaf + 88)).toString('hex')} ${Buffer.from(bytes.subarray(leaf + 96, leaf + 96 + 64 * bits)).toString('hex')}`);
      leaf += 96 + 64 * bits;
    }
    return out;
  }

  it.each([
    ['fp4', GridType.Fp4],
    ['fp8', GridType.Fp8],
    ['fp16', GridType.Fp16],
    ['fpn', GridType.FpN],
  ] as const)('%s: every leaf has NanoVDB\'s width, minimum, quantum and codes, byte for byte', (name, gridType) => {
    const [nanovdb] = unwrap(decodeNvdb(new Uint8Array(readFileSync(join(FIXTURES, `${name}.nvdb`)))));
    const built = unwrap(voxelsToGrid(backend, resource, { coords, values }, { gridType, background: source.background, gridClass: GridClass.FogVolume, tolerance: source.tolerance }));
    const ours = leaves(unwrap(built.hostBytes()));
    expect(ours.size).toBeGreaterThan(2);
    expect(ours).toEqual(leaves(nanovdb!.bytes));
    built.dispose();
  });

  it('FpN defaults to NanoVDB\'s tolerance for the class and refuses a negative one', () => {
    const fog = unwrap(voxelsToGrid(backend, resource, { coords, values }, { gridType: GridType.FpN, gridClass: GridClass.FogVolume }));
    const acc = unwrap(fog.accessor());
    source.voxels.forEach(([x, y, z, value]) => expect(Math.abs(acc.getValue(x, y, z) - value)).toBeLessThanOrEqual(Math.fround(0.01) + 1e-7));
    const r = voxelsToGrid(backend, resource, { coords, values }, { gridType: GridType.FpN, tolerance: -1 });
    expect(r.ok ? '' : r.error.message).toContain('voxelsToGrid: tolerance');
  });
});

describe('voxelsToGrid stores every NaN as the canonical quiet NaN', () => {
  // quiet and signalling NaNs with payloads and both signs, given as f64 bits (the f32 and f16 grids round them)
  const nanBits = [0x7ff8000000000123n, 0xfff0000000000001n, 0x7ff00000000abcden, 0xfff8000000000000n];
  const floatTypes: [string, ValueGridType, number][] = [
    ['Float', GridType.Float, 1],
    ['Double', GridType.Double, 1],
    ['Half', GridType.Half, 1],
    ['Vec3f', GridType.Vec3f, 3],
    ['Vec3d', GridType.Vec3d, 3],
    ['Vec4f', GridType.Vec4f, 4],
  ];
  it.each(floatTypes)('%s: NaN voxel values and a NaN background', (_, gridType, components) => {
    const n = 40;
    const coords = new Int32Array(Array.from({ length: 3 * n }, (_v, i) => (i % 3 === 0 ? Math.floor(i / 3) * 3 : i % 3)));
    const values = new Float64Array(components * n).map((_v, i) => i * 0.5 - 7);
    const bits = new BigUint64Array(values.buffer);
    for (let i = 0; i < values.length; i += 3) bits[i] = nanBits[(i / 3) % nanBits.length] as bigint;
    const background = new Float64Array(1);
    new BigUint64Array(background.buffer)[0] = 0xfff8000000000badn;
    const handle = unwrap(voxelsToGrid(backend, resource, { coords, values }, { gridType, background: components === 1 ? (background[0] as number) : new Array<number>(components).fill(background[0] as number) }));
    const stored = storedNaNs(unwrap(handle.hostBytes()));
    handle.dispose();
    expect(stored.other).toBe(0);
    // the NaN voxel values and the NaN background of every inactive voxel of the leaves
    expect(stored.canonical).toBeGreaterThan(Math.ceil(values.length / 3));
  });
});
