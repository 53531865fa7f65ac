// Grid statistics against NanoVDB's own: its fixtures were built with StatsMode::All, so every node holds the min,
// max, average and standard deviation NanoVDB computed. hs recomputes them into a copy of each grid and must leave
// every byte as it was; gridStatistics must equal the root's.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ErrorCode, HostBackend, unwrap } from '@hs/streams';
import { GridType, HostResource, decodeNvdb, gridStatistics, validateGrids, voxelsToGrid } from '../../src/index.js';
import { writeGridStatistics } from '../../src/nanovdb/grid/grid-statistics.js';
import { valueLayoutOf } from '../../src/nanovdb/grid/grid-layout.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/nanovdb');

describe.each(['float', 'double', 'int16', 'int32', 'int64', 'uint32', 'uint8'])('statistics of NanoVDB\'s %s grid', (name) => {
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
    // and hs does write: zeroing the root's statistics, they come back
    const layout = valueLayoutOf(g.gridType)!;
    copy.fill(0, 736 + layout.rootMinimum, 736 + layout.rootDataSize);
    writeGridStatistics(copy, g.gridType);
    expect(Buffer.from(copy.subarray(736, 736 + layout.rootDataSize)).equals(Buffer.from(bytes.subarray(736, 736 + layout.rootDataSize)))).toBe(true);
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
  it('NotSupported for grids without plain scalar values, InvalidArgument for no active value', () => {
    const [segment] = unwrap(decodeNvdb(new Uint8Array(readFileSync(join(FIXTURES, 'vec3f.nvdb')))));
    const r = gridStatistics(segment!.bytes, segment!.grids[0]!);
    expect(r.ok ? '' : r.error.code).toBe(ErrorCode.NotSupported);
    const backend = new HostBackend();
    const empty = unwrap(voxelsToGrid(backend, new HostResource(backend), { coords: new Int32Array(0), values: new Float32Array(0) }, { gridType: GridType.Float }));
    const e = gridStatistics(unwrap(empty.hostBytes()), empty.grid()!);
    expect(e.ok ? '' : e.error.code).toBe(ErrorCode.InvalidArgument);
    expect(unwrap(validateGrids(unwrap(empty.hostBytes())))[0]!.voxelCount).toBe(0);
  });
});

describe('voxelsToGrid with statistics', () => {
  const backend = new HostBackend();
  it.each(['float', 'int64', 'uint8'])('%s: every node holds the statistics NanoVDB stored in its own grid of the same voxels', (name) => {
    const expected = JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8')) as { gridType: GridType; gridClass: number; background: number | string; samples: [number, number, number, boolean, number | string][] };
    const active = expected.samples.filter((s) => s[3]);
    const int64 = expected.gridType === GridType.Int64;
    const values = int64 ? new BigInt64Array(active.map((s) => BigInt(s[4]))) : new Float64Array(active.map((s) => Number(s[4])));
    const built = unwrap(voxelsToGrid(backend, new HostResource(backend), { coords: new Int32Array(active.flatMap((s) => s.slice(0, 3) as number[])), values }, {
      gridType: expected.gridType as GridType.Float, gridClass: expected.gridClass, background: int64 ? BigInt(expected.background) : Number(expected.background), statistics: true,
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

  it('refuses statistics for a type without plain scalar values', () => {
    const r = voxelsToGrid(backend, new HostResource(backend), { coords: new Int32Array([0, 0, 0]) }, { gridType: GridType.Mask, statistics: true });
    expect(r.ok ? '' : r.error.message).toContain('voxelsToGrid: statistics');
  });
});

/** Node origin -> its statistics bytes (min, max, avg, stddev), for every leaf, lower and upper node. */
function nodeStatistics(bytes: Uint8Array, gridType: GridType): Map<string, string> {
  const layout = valueLayoutOf(gridType)!;
  const [g] = unwrap(validateGrids(bytes));
  const v = new DataView(bytes.buffer, bytes.byteOffset);
  const out = new Map<string, string>();
  const hex = (a: number, b: number): string => Buffer.from(bytes.subarray(a, b)).toString('hex');
  const levels = [
    [0, layout.leafSize, layout.leafMinimum, layout.leafAverage + 2 * layout.statsSize, ~7],
    [8, layout.lower.size, layout.lower.stats, layout.lower.average + 2 * layout.statsSize, ~127],
    [16, layout.upper.size, layout.upper.stats, layout.upper.average + 2 * layout.statsSize, ~4095],
  ] as const;
  levels.forEach(([offsetAt, size, from, to, mask], level) => {
    const start = 672 + Number(v.getBigInt64(672 + offsetAt, true));
    for (let n = 0; n < g!.nodeCount[level]!; n++) {
      const node = start + n * size;
      out.set(`${level}:${[0, 4, 8].map((a) => v.getInt32(node + a, true) & mask).join(',')}`, hex(node + from, node + to));
    }
  });
  return out;
}
