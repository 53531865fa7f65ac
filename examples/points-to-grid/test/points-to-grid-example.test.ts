import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HostBackend, unwrap } from '@hs/streams';
import { HostResource, readNvdb } from '@hs/nanovdb-mr';
import { buildGrid } from '../src/build-grid.js';
import { bunnyPoints, loadPoints } from '../src/load-points.js';

const dir = mkdtempSync(join(tmpdir(), 'hs-points-to-grid-'));

describe('points-to-grid example', () => {
  it('builds the bunny, writes a .nvdb that reads back, and returns every allocation', () => {
    const output = join(dir, 'bunny.nvdb');
    const lines = unwrap(buildGrid({ cloud: bunnyPoints(), voxelSize: 0.1, output, codec: 'zip' }));
    const text = lines.join('\n');
    expect(text).toContain('points: 1839 from Stanford bunny');
    expect(text).toMatch(/OnIndex, voxel size 0.1, \d+ active voxels/);
    expect(text).toMatch(/allocations through the resource: \d+ \(0 outstanding\).*, 0 bytes outstanding/);
    const backend = new HostBackend();
    const [handle] = unwrap(readNvdb(backend, new HostResource(backend), readFileSync(output)));
    expect(handle?.grid()?.voxelCount).toBeGreaterThan(1000);
    expect(handle?.grid()?.voxelCount).toBeLessThanOrEqual(1839);
    handle?.dispose();
  });

  it('reads PLY and XYZ inputs and reports bad ones', () => {
    const ply = join(dir, 'three.ply');
    writeFileSync(ply, 'ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nend_header\n0 0 0\n1.5 2 3\n-1 -2 -3\n');
    expect(unwrap(loadPoints(ply)).positions).toEqual(new Float32Array([0, 0, 0, 1.5, 2, 3, -1, -2, -3]));
    const xyz = join(dir, 'two.xyz');
    writeFileSync(xyz, '# x y z\n1 2 3\n4 5 6 255 0 0\n');
    expect([...unwrap(loadPoints(xyz)).positions]).toEqual([1, 2, 3, 4, 5, 6]);
    writeFileSync(xyz, '1 2\n');
    expect(loadPoints(xyz).ok).toBe(false);
    expect(loadPoints(join(dir, 'missing.ply')).ok).toBe(false);
    expect(loadPoints(join(dir, 'cloud.obj')).ok).toBe(false);
    const nan = join(dir, 'nan.xyz');
    writeFileSync(nan, '1 2 3\nInfinity 0 0\n');
    const r = buildGrid({ cloud: unwrap(loadPoints(nan)), voxelSize: 1, output: join(dir, 'nan.nvdb'), codec: 'none' });
    expect(!r.ok && r.error.message).toContain('point 1 has a non-finite coordinate');
  });
});
