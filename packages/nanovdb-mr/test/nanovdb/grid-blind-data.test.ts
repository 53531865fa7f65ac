// Blind data against NanoVDB's own: blind.nvdb is a Float grid NanoVDB's CreateNanoGrid wrote with three blind-data
// channels (Vec3u8 and Vec3u16 voxel offsets, Float radii); blind.json lists the records and values NanoVDB wrote.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ErrorCode, HostBackend, unwrap } from '@hs/streams';
import { GridHandle, GridType, HostResource, ResourceBuffer, decodeNvdb, gridBlindMetadata, readBlindData, validateGrids, writeNvdb } from '../../src/index.js';
import { computeChecksum, writeChecksum } from '../../src/nanovdb/grid/grid-checksum.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/nanovdb');
const expected = JSON.parse(readFileSync(join(FIXTURES, 'blind.json'), 'utf8')) as {
  blind: { name: string; semantic: number; dataClass: number; dataType: number; valueCount: number; valueSize: number; values: number[] }[];
};
const file = new Uint8Array(readFileSync(join(FIXTURES, 'blind.nvdb')));
const [segment] = unwrap(decodeNvdb(file));
const bytes = segment!.bytes;
const grid = segment!.grids[0]!;

describe('blind data of a NanoVDB-written grid', () => {
  it('every record as NanoVDB wrote it: name, semantic, class, type (Vec3u8, Vec3u16), count and size', () => {
    const records = gridBlindMetadata(bytes, grid);
    expect(records.map(({ name, semantic, dataClass, dataType, valueCount, valueSize }) => ({ name, semantic, dataClass, dataType, valueCount, valueSize }))).toEqual(
      expected.blind.map(({ values: _, ...meta }) => meta),
    );
    expect(records.map((r) => r.dataType)).toEqual([GridType.Vec3u8, GridType.Vec3u16, GridType.Float]);
  });

  it('each channel value for value into a caller-supplied typed array, reused across calls', () => {
    const records = gridBlindMetadata(bytes, grid);
    const u8 = new Uint8Array(64);
    const u16 = new Uint16Array(64);
    const f32 = new Float32Array(64);
    for (const [i, out] of [u8, u16, f32].entries()) {
      const n = unwrap(readBlindData(bytes, grid, records[i]!, out));
      expect(Array.from(out.subarray(0, n))).toEqual(expected.blind[i]!.values);
    }
    expect(unwrap(readBlindData(bytes, grid, records[0]!, u8))).toBe(21); // again, same array
  });

  it('refuses the wrong array type or a short one, naming the record', () => {
    const [u8rec, u16rec] = gridBlindMetadata(bytes, grid);
    const wrong = readBlindData(bytes, grid, u16rec!, new Uint8Array(64));
    expect(wrong.ok ? '' : wrong.error.message).toContain("record 1 ('voxel offsets u16') of Vec3u16 values needs a Uint16Array");
    const short = readBlindData(bytes, grid, u8rec!, new Uint8Array(20));
    expect(short.ok ? '' : short.error.code).toBe(ErrorCode.InvalidArgument);
  });

  it('round-trips byte-exact through writeNvdb and decodeNvdb', () => {
    const backend = new HostBackend();
    const buffer = unwrap(ResourceBuffer.allocate(backend, new HostResource(backend), bytes.length, { alignment: 32 }));
    unwrap(buffer.hostView()).set(bytes);
    const handle = unwrap(GridHandle.fromHostBytes(backend, buffer));
    const [again] = unwrap(decodeNvdb(unwrap(writeNvdb(handle, 'zip'))));
    expect(Buffer.from(again!.bytes).equals(Buffer.from(bytes))).toBe(true);
    handle.dispose();
  });
});

describe('blind metadata validation', () => {
  const first = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigInt64(640, true));
  /** A copy of the grid with u32 `value` at byte `at` of record `b`, its checksum redone. */
  const corrupt = (b: number, at: number, value: number): Uint8Array => {
    const copy = bytes.slice();
    new DataView(copy.buffer).setUint32(first + 288 * b + at, value, true);
    writeChecksum(copy, computeChecksum(copy, copy.length, 'full'));
    return copy;
  };
  it.each([
    [0, 24, 5, 'blindMetadata[0].dataClass'],
    [0, 20, 23, 'blindMetadata[0].semantic'],
    [0, 28, 27, 'blindMetadata[0].dataType'],
    [1, 16, 3, 'blindMetadata[1].valueSize'], // Vec3u16 takes 6
    [2, 20, 6, 'blindMetadata[2].dataType'], // a PointId attribute array: a combination NanoVDB refuses
    [0, 28, GridType.Vec3f, 'blindMetadata[0].valueSize'], // Vec3f values take 12, not 3
  ])('record %i, byte %i = %i: InvalidArgument naming %s', (b, at, value, field) => {
    const r = validateGrids(corrupt(b, at, value));
    expect(r.ok ? '' : r.error.code).toBe(ErrorCode.InvalidArgument);
    expect(r.ok ? '' : r.error.message).toContain(field);
  });

  it('accepts the fixture and the point-scatter grid, whose positions are blind data', () => {
    expect(unwrap(validateGrids(bytes))[0]!.blindMetadataCount).toBe(3);
    const [points] = unwrap(decodeNvdb(new Uint8Array(readFileSync(join(FIXTURES, 'pointdata.nvdb')))));
    expect(gridBlindMetadata(points!.bytes, points!.grids[0]!).length).toBeGreaterThan(0);
  });
});
