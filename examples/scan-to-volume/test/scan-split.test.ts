import { bunnyPoints } from '@hs/example-point-cloud-input';
import { describe, expect, it } from 'vitest';
import { MAX_SCANS, splitIntoScans } from '../src/scan-split.js';

describe('splitIntoScans', () => {
  it('partitions the cloud into azimuth sectors, every point once, in original order', () => {
    const positions = Float64Array.from([1, 0, 5, 0, 1, 6, -1, 0, 7, 0, -1, 8, 2, 0.001, 9]);
    const { scans, maxScanPoints } = splitIntoScans(positions, 4);
    // Centre of the x-y box is (0.5, 0): azimuths 0 (x=1), ~117 deg, 180, ~243 deg, ~0 deg (x=2); sector 3 stays empty.
    expect(scans.map((s) => [...s])).toEqual([[1, 0, 5, 2, 0.001, 9], [0, 1, 6], [-1, 0, 7, 0, -1, 8], []]);
    expect(maxScanPoints).toBe(2);
  });

  it('is deterministic and loses no bunny point', () => {
    const cloud = bunnyPoints().positions;
    const a = splitIntoScans(cloud, 36);
    const b = splitIntoScans(cloud, 36);
    expect(a.scans.reduce((n, s) => n + s.length / 3, 0)).toBe(1839);
    expect(a.scans.map((s) => [...s])).toEqual(b.scans.map((s) => [...s]));
    const sorted = (v: Iterable<number>) => [...v].sort((x, y) => x - y);
    expect(sorted(a.scans.flatMap((s) => [...s]))).toEqual(sorted(cloud));
  });

  it('rejects a scan count outside 1..MAX_SCANS and a partial triplet', () => {
    expect(() => splitIntoScans(new Float64Array(3), 0)).toThrow(/scanCount/);
    expect(() => splitIntoScans(new Float64Array(3), MAX_SCANS + 1)).toThrow(/scanCount/);
    expect(() => splitIntoScans(new Float64Array(4), 2)).toThrow(/triplets/);
  });
});
