// Grid statistics against NanoVDB's own: its fixtures were built with StatsMode::All, so every node holds the min,
// max, average and standard deviation NanoVDB computed. hs recomputes them into a copy of each grid and must leave
// every byte as it was; gridStatistics must equal the root's.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ErrorCode, HostBackend, HsError, unwrap } from '@hs/streams';
import { GridType, HostResource, decodeNvdb, gridStatistics, validateGrids, voxelsToGrid } from '../../src/index.js';
import { writeGridStatistics } from '../../src/nanovdb/grid/grid-statistics.js';
import { LeafKind, leafBytes, valueLayoutOf } from '../../src/nanovdb/grid/grid-layout.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/nanovdb');

describe.each(['float', 'double', 'int16', 'int32', 'int64', 'uint32', 'uint8', 'vec3f', 'vec3d', 'vec4f', 'vec4d', 'rgba8', 'fp4', 'fp8', 'fp16', 'fpn'])('statistics of NanoVDB\'s %s grid', (name) => {
  const [segment] = unwrap(decodeNvdb(new Uint8Array(readFileSync(join(FIXTURES, `${name}.nvdb`)))));
  const bytes = segment!.bytes;
  const g = segment!.grids[0]!;

  it('hs writes into every node exactly the statistics NanoVDB stored there', () => {
    const copy = bytes.slice();
    const v = new DataView(copy.buffer);
    expect(v.getUint32(20, true) & 28).toBe(28); // HasMinMax | HasAverage | HasStdDeviation
    writeGridStatistics(copy, g.gridType);
    let differ = 0;
    for (let i = 0; i < copy.length; i++) if (copy[i] !== bytes[i]) differ++;
    expect(differ).toBe(0);
    // and hs does write: zeroing the statistics of the root and of every node, they come back byte for byte
    const layout = valueLayoutOf(g.gridType)!;
    copy.fill(0, 736 + layout.rootMinimum, 736 + layout.rootDataSize);
    for (const [from, to] of statisticsRanges(copy, g.gridType).values()) copy.fill(0, from, to);
    writeGridStatistics(copy, g.gridType);
    expect(Buffer.from(copy).equals(Buffer.from(bytes))).toBe(true);
  });

  it('gridStatistics equals the root statistics, before they were rounded to the stored type', () => {
    const s = unwrap(gridStatistics(bytes, g));
    expect(s.count).toBe(g.voxelCount);
    const stored = new DataView(bytes.buffer, bytes.byteOffset);
    const layout = valueLayoutOf(g.gridType)!;
    const wide = layout.statsSize === 8;
    const avg = wide ? stored.getFloat64(736 + layout.rootAverage, true) : stored.getFloat32(736 + layout.rootAverage, true);
    expect(wide ? s.average : Math.fround(s.average)).toBe(avg);
  });
});

describe('gridStatistics refusals', () => {
  it('NotSupported for grids without statistics, InvalidArgument for no active value', () => {
    const [segment] = unwrap(decodeNvdb(new Uint8Array(readFileSync(join(FIXTURES, 'mask.nvdb')))));
    const r = gridStatistics(segment!.bytes, segment!.grids[0]!);
    expect(r.ok ? '' : r.error.code).toBe(ErrorCode.NotSupported);
    const backend = new HostBackend();
    const empty = unwrap(voxelsToGrid(backend, new HostResource(backend), { coords: new Int32Array(0), values: new Float32Array(0) }, { gridType: GridType.Float }));
    const e = gridStatistics(unwrap(empty.hostBytes()), empty.grid()!);
    expect(e.ok ? '' : e.error.code).toBe(ErrorCode.InvalidArgument);
    expect(unwrap(validateGrids(unwrap(empty.hostBytes())))[0]!.voxelCount).toBe(0);
  });

  it('throws a typed InvalidArgument saying what to pass when given a handle instead of (bytes, metadata)', () => {
    const backend = new HostBackend();
    const handle = unwrap(voxelsToGrid(backend, new HostResource(backend), { coords: new Int32Array([0, 0, 0]), values: new Float32Array([1]) }, { gridType: GridType.Float }));
    for (const call of [() => gridStatistics(handle as never, undefined as never), () => gridStatistics(unwrap(handle.hostBytes()), undefined as never)]) {
      let thrown: unknown;
      try {
        call();
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(HsError);
      expect((thrown as HsError).code).toBe(ErrorCode.InvalidArgument);
      expect((thrown as HsError).message).toContain('gridStatistics(handle.hostBytes(), handle.grid())');
    }
    handle.dispose();
  });
});

describe('voxelsToGrid with statistics', () => {
  const backend = new HostBackend();
  it.each(['float', 'int64', 'uint8', 'vec3f', 'vec3d', 'vec4f', 'vec4d', 'rgba8'])('%s: every node holds the statistics NanoVDB stored in its own grid of the same voxels', (name) => {
    type Value = number | string | (number | string)[];
    const expected = JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8')) as { gridType: GridType; gridClass: number; background: Value; samples: [number, number, number, boolean, Value][] };
    const active = expected.samples.filter((s) => s[3]);
    const int64 = expected.gridType === GridType.Int64;
    const values = int64 ? new BigInt64Array(active.map((s) => BigInt(s[4] as string))) : new Float64Array(active.flatMap((s) => [s[4]].flat().map(Number)));
    const background = int64 ? BigInt(expected.background as string) : Array.isArray(expected.background) ? expected.background.map(Number) : Number(expected.background);
    const built = unwrap(voxelsToGrid(backend, new HostResource(backend), { coords: new Int32Array(active.flatMap((s) => s.slice(0, 3) as number[])), values }, {
      gridType: expected.gridType as GridType.Float, gridClass: expected.gridClass, background, statistics: true,
    }));
    const [segment] = unwrap(decodeNvdb(new Uint8Array(readFileSync(join(FIXTURES, `${name}.nvdb`)))));
    const stats = (bytes: Uint8Array): Map<string, string> => nodeStatistics(bytes, expected.gridType);
    const ours = stats(unwrap(built.hostBytes()));
    expect(ours.size).toBeGreaterThan(10);
    expect(ours).toEqual(stats(segment!.bytes));
    const layout = valueLayoutOf(expected.gridType)!;
    const root = (b: Uint8Array): string => Buffer.from(b.subarray(736 + layout.rootMinimum, 736 + layout.rootDataSize)).toString('hex');
    expect(root(unwrap(built.hostBytes()))).toBe(root(segment!.bytes)); // the root's too: its tiles come in the same order
    expect(built.grid()!.flags & 28).toBe(28);
  });

  it.each([
    ['fp4', GridType.Fp4],
    ['fp8', GridType.Fp8],
    ['fp16', GridType.Fp16],
    ['fpn', GridType.FpN],
  ] as const)('%s: every node, quantized leaves included, holds the statistics NanoVDB stored in its grid of the same floats', (name, gridType) => {
    const source = JSON.parse(readFileSync(join(FIXTURES, 'quantized-source.json'), 'utf8')) as { background: number; tolerance: number; voxels: [number, number, number, number][] };
    const built = unwrap(voxelsToGrid(backend, new HostResource(backend), { coords: new Int32Array(source.voxels.flatMap((s) => s.slice(0, 3))), values: new Float32Array(source.voxels.map((s) => s[3])) }, {
      gridType, background: source.background, gridClass: 2, tolerance: source.tolerance, statistics: true,
    }));
    const [segment] = unwrap(decodeNvdb(new Uint8Array(readFileSync(join(FIXTURES, `${name}.nvdb`)))));
    const ours = nodeStatistics(unwrap(built.hostBytes()), gridType);
    expect(ours.size).toBeGreaterThan(5);
    expect(ours).toEqual(nodeStatistics(segment!.bytes, gridType));
    const layout = valueLayoutOf(gridType)!;
    const root = (b: Uint8Array): string => Buffer.from(b.subarray(736 + layout.rootMinimum, 736 + layout.rootDataSize)).toString('hex');
    expect(root(unwrap(built.hostBytes()))).toBe(root(segment!.bytes));
  });

  it('Half: f16 extrema, f32 average and deviation of the values as numbers', () => {
    const values = new Float32Array([0.5, -2, 65504, 0.099975586]);
    const built = unwrap(voxelsToGrid(backend, new HostResource(backend), { coords: new Int32Array([0, 0, 0, 1, 0, 0, 9, 9, 9, 4000, 0, 0]), values }, { gridType: GridType.Half, statistics: true }));
    const s = unwrap(gridStatistics(unwrap(built.hostBytes()), built.grid()!));
    const mean = values.reduce((a, x) => a + x, 0) / 4;
    expect([s.min, s.max, s.count]).toEqual([-2, 65504, 4]);
    expect(s.average).toBeCloseTo(mean, 6);
    const v = new DataView(unwrap(built.hostBytes()).buffer);
    const layout = valueLayoutOf(GridType.Half)!;
    expect([v.getUint16(736 + layout.rootMinimum, true), v.getUint16(736 + layout.rootMinimum + 2, true)]).toEqual([0xc000, 0x7bff]);
    expect(v.getFloat32(736 + layout.rootAverage, true)).toBe(Math.fround(s.average));
  });

  it.each([GridType.Float, GridType.Double])('type %s: a NaN value, even the first of a leaf, is never an extreme (NanoVDB starts from the type limits)', (gridType) => {
    // Leaf 1: NaN first in voxel order, then 3 and -1. Leaf 2 (x = 100): +inf alone, so its minimum stays the type's max.
    const values = new Float64Array([Number.NaN, 3, -1, Infinity]);
    const built = unwrap(voxelsToGrid(backend, new HostResource(backend), { coords: new Int32Array([0, 0, 0, 1, 0, 0, 2, 0, 0, 100, 0, 0]), values }, { gridType: gridType as GridType.Float, statistics: true }));
    const bytes = unwrap(built.hostBytes());
    const s = unwrap(gridStatistics(bytes, built.grid()!));
    expect([s.min, s.max, s.count]).toEqual([-1, Infinity, 4]);
    expect(s.average).toBeNaN();
    const layout = valueLayoutOf(gridType)!;
    const v = new DataView(bytes.buffer, bytes.byteOffset);
    const read = (at: number): number => (gridType === GridType.Float ? v.getFloat32(at, true) : v.getFloat64(at, true));
    expect([read(736 + layout.rootMinimum), read(736 + layout.rootMinimum + layout.valueSize)]).toEqual([-1, Infinity]);
    const ranges = statisticsRanges(bytes, gridType);
    const extremes = (node: string): number[] => [read(ranges.get(node)![0]), read(ranges.get(node)![0] + layout.valueSize)];
    expect(extremes('0:0,0,0')).toEqual([-1, 3]);
    expect(extremes('0:96,0,0')).toEqual([gridType === GridType.Float ? 3.4028234663852886e38 : Number.MAX_VALUE, Infinity]);
  });

  it('gridStatistics of a vector grid: the vectors of least and greatest squared length, the mean of squared lengths', () => {
    const [segment] = unwrap(decodeNvdb(new Uint8Array(readFileSync(join(FIXTURES, 'vec3d.nvdb')))));
    const expected = JSON.parse(readFileSync(join(FIXTURES, 'vec3d.json'), 'utf8')) as { samples: [number, number, number, boolean, number[]][] };
    const vectors = expected.samples.filter((s) => s[3]).map((s) => s[4]);
    const sq = vectors.map((x) => x[0]! * x[0]! + x[1]! * x[1]! + x[2]! * x[2]!);
    const s = unwrap(gridStatistics(segment!.bytes, segment!.grids[0]!));
    expect(s.min).toEqual(vectors[sq.indexOf(Math.min(...sq))]);
    expect(s.max).toEqual(vectors[sq.indexOf(Math.max(...sq))]);
    expect(s.average / (sq.reduce((a, x) => a + x, 0) / sq.length)).toBeCloseTo(1, 12);
  });

  it('refuses statistics for a type without values', () => {
    const r = voxelsToGrid(backend, new HostResource(backend), { coords: new Int32Array([0, 0, 0]) }, { gridType: GridType.Mask, statistics: true });
    expect(r.ok ? '' : r.error.message).toContain('voxelsToGrid: statistics');
  });
});

/** Node origin -> its statistics bytes (min, max, avg, stddev), for every leaf, lower and upper node. */
function nodeStatistics(bytes: Uint8Array, gridType: GridType): Map<string, string> {
  const hex = ([a, b]: readonly [number, number]): string => Buffer.from(bytes.subarray(a, b)).toString('hex');
  return new Map([...statisticsRanges(bytes, gridType)].map(([node, range]) => [node, hex(range)]));
}

/** Node origin -> the byte range of its statistics (quantized leaves: the u16 codes), for every leaf, lower and upper node. */
function statisticsRanges(bytes: Uint8Array, gridType: GridType): Map<string, readonly [number, number]> {
  const layout = valueLayoutOf(gridType)!;
  const [g] = unwrap(validateGrids(bytes, { checksum: false }));
  const v = new DataView(bytes.buffer, bytes.byteOffset);
  const out = new Map<string, readonly [number, number]>();
  const quantized = layout.leafKind === LeafKind.Quantized;
  const levels = [
    [0, quantized ? 88 : layout.leafMinimum, quantized ? 96 : layout.leafAverage + 2 * layout.statsSize, ~7],
    [8, layout.lower.stats, layout.lower.average + 2 * layout.statsSize, ~127],
    [16, layout.upper.stats, layout.upper.average + 2 * layout.statsSize, ~4095],
  ] as const;
  levels.forEach(([offsetAt, from, to, mask], level) => {
    let node = 672 + Number(v.getBigInt64(672 + offsetAt, true));
    for (let n = 0; n < g!.nodeCount[level]!; n++) {
      out.set(`${level}:${[0, 4, 8].map((a) => v.getInt32(node + a, true) & mask).join(',')}`, [node + from, node + to]);
      node += level === 0 ? leafBytes(layout, v, node) : level === 1 ? layout.lower.size : layout.upper.size;
    }
  });
  return out;
}
