// PointIndex grids (GridType 23): NanoVDB's host tools cannot write them (its CUDA PointsToGrid does), so hs writes
// one and NanoVDB reads it: hs-pointindex.nanovdb.json is what NanoVDB's API read from the grid this test builds
// (re-made by make-nanovdb-fixtures.sh, which sets HS_POINT_FIXTURE_OUT to get the grid file from this test).
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { HostBackend, unwrap } from '@hs/streams';
import { GridClass, GridType, HostResource, decodeNvdb, validateGrids, voxelsToGrid, writeNvdb } from '../../src/index.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/nanovdb');
const backend = new HostBackend();

/** 400 points in voxel coordinates, many voxels holding several, in seven leaves of two root tiles. */
function points(): Int32Array {
  const c: number[] = [];
  for (let i = 0; i < 360; i++) c.push(((i * 37) % 13) - 4, (i * 11) % 9, -((i * 5) % 7));
  for (let i = 0; i < 40; i++) c.push(-5000 + (i % 6), 4100, 9000 - (i % 3));
  return new Int32Array(c);
}

interface NanoVdbRead {
  readonly pointCount: number;
  readonly leaves: readonly { readonly origin: number[]; readonly offset: number; readonly pointCount: number; readonly voxels: [number, number][] }[];
  readonly pointIds: readonly number[];
}

describe('PointIndex grids', () => {
  const handle = unwrap(voxelsToGrid(backend, new HostResource(backend), { coords: points() }, { gridType: GridType.PointIndex, name: 'points' }));
  if (process.env.HS_POINT_FIXTURE_OUT) writeFileSync(process.env.HS_POINT_FIXTURE_OUT, unwrap(writeNvdb(handle, 'zip')));
  const nanovdb = JSON.parse(readFileSync(join(FIXTURES, 'hs-pointindex.nanovdb.json'), 'utf8')) as NanoVdbRead;

  it('hs reads every voxel, leaf offset and point count as NanoVDB reads them', () => {
    const g = handle.grid()!;
    expect(g).toMatchObject({ gridType: GridType.PointIndex, gridClass: GridClass.PointIndex, blindMetadataCount: 1 });
    const acc = unwrap(handle.accessor());
    const bytes = unwrap(handle.hostBytes());
    const v = new DataView(bytes.buffer, bytes.byteOffset);
    let leaf = 672 + Number(v.getBigInt64(672, true));
    expect(g.nodeCount[0]).toBe(nanovdb.leaves.length);
    for (const expected of nanovdb.leaves) {
      expect([[0, 4, 8].map((a) => v.getInt32(leaf + a, true) & ~7), Number(v.getBigUint64(leaf + 80, true)), Number(v.getBigUint64(leaf + 88, true))]).toEqual([expected.origin, expected.offset, expected.pointCount]);
      const [ox, oy, oz] = expected.origin as [number, number, number];
      expected.voxels.forEach(([active, value], n) => {
        const [x, y, z] = [ox + (n >> 6), oy + ((n >> 3) & 7), oz + (n & 7)];
        expect([acc.isActive(x, y, z) ? 1 : 0, acc.getValue(x, y, z)]).toEqual([active, value]);
      });
      leaf += 1120;
    }
    const ids = new Uint32Array(bytes.buffer.slice(bytes.byteOffset + Number(v.getBigInt64(640, true)) + 288, bytes.byteOffset + Number(v.getBigInt64(640, true)) + 288 + 4 * nanovdb.pointCount));
    expect([...ids]).toEqual(nanovdb.pointIds);
    expect(nanovdb.pointCount).toBe(400);
  });

  it('round-trips through .nvdb byte for byte', () => {
    const bytes = unwrap(handle.hostBytes());
    const [again] = unwrap(decodeNvdb(unwrap(writeNvdb(handle, 'zip'))));
    expect(Buffer.from(again!.bytes).equals(Buffer.from(bytes))).toBe(true);
  });

  it('a truncated or corrupt PointIndex grid gives a typed error naming the field', () => {
    const bytes = unwrap(handle.hostBytes());
    const problem = (b: Uint8Array): string => {
      const r = validateGrids(b, { checksum: false });
      return r.ok ? 'valid' : r.error.message;
    };
    const damaged = bytes.slice();
    const v = new DataView(damaged.buffer);
    v.setBigInt64(Number(v.getBigInt64(640, true)), 1n << 40n, true); // the blind data's offset
    expect(problem(damaged)).toContain('blindMetadata[0].dataOffset:');
    expect(problem(bytes.subarray(0, bytes.length - 64))).toContain('gridSize:');
  });

  it('refuses more than 65535 points in one leaf (its counts are u16)', () => {
    const r = voxelsToGrid(backend, new HostResource(backend), { coords: new Int32Array(3 * 65536) }, { gridType: GridType.PointIndex });
    expect(r.ok ? '' : r.error.message).toContain('more than 65535 points');
  });
});
