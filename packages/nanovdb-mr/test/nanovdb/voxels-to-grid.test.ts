// voxelsToGrid writes every plain, vector, Mask and Boolean grid type: built from the voxels and values of the
// NanoVDB-written fixtures, each grid reads back what NanoVDB read from its own grid at every sampled coordinate.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ErrorCode, HostBackend, unwrap } from '@hs/streams';
import { GridClass, GridType, HostResource, decodeNvdb, encodeNvdb, voxelsToGrid, type ValueGridType } from '../../src/index.js';

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
    ['gridType', { gridType: GridType.Fp8 as unknown as ValueGridType }, undefined],
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
});
