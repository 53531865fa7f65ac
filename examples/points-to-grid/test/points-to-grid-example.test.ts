import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCode, HostBackend, unwrap, type Result } from '@hs/streams';
import { HostResource, readNvdb } from '@hs/nanovdb-mr';
import { buildGrid } from '../src/build-grid.js';
import { parseCliOptions } from '../src/cli-options.js';
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
    const r = buildGrid({ cloud: { positions: new Float64Array([1, 2, 3, Infinity, 0, 0]), source: 'test' }, voxelSize: 1, output: join(dir, 'nan.nvdb'), codec: 'none' });
    expect(!r.ok && r.error.message).toContain('point 1 has a non-finite coordinate');
  });

  it.each([
    ['a directory', () => dir, 'EISDIR'],
    ['a path under a file', () => join(writeFile('plain.txt', 'x'), 'out.nvdb'), 'ENOTDIR|EEXIST'],
    ...(existsSync('/dev/full') ? [['a full device', () => '/dev/full', 'ENOSPC'] as const] : []),
  ] as const)('an unwritable --output (%s) is a one-line typed error with the OS code', (_, output, code) => {
    const r = buildGrid({ cloud: bunnyPoints(), voxelSize: 0.5, output: output(), codec: 'none' });
    expect(!r.ok && r.error.code).toBe(ErrorCode.InvalidArgument);
    expect(!r.ok && r.error.message).toMatch(new RegExp(`^InvalidArgument: cannot write .+: (${code})\\b`));
    expect(!r.ok && r.error.message).not.toContain('\n');
  });

  it('names what is wrong with an input file', () => {
    const noZ = writeFile('no-z.ply', 'ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty float y\nend_header\n0 0\n1 2\n');
    expectMessage(loadPoints(noZ), `${noZ}: the PLY vertex element has no "z" property (it has x, y)`);
    const junk = writeFile('junk.ply', 'hello world junk\n1 2 3\n');
    expectMessage(loadPoints(junk), `${junk} is not a readable PLY file`);
    const folder = loadPoints(dir);
    expect(!folder.ok && folder.error.code).not.toBe(ErrorCode.NotFound);
    expectMessage(folder, 'EISDIR');
    expect(loadPoints(join(dir, 'missing.xyz')).ok || unwrapError(loadPoints(join(dir, 'missing.xyz'))).code).toBe(ErrorCode.NotFound);
    for (const [line, text] of [['1 2 0x10', 'hex'], ['Infinity 0 0', 'infinite'], ['NaN 1 2', 'NaN'], ['1e400 0 0', 'overflow']] as const) {
      const xyz = writeFile(`bad-${text}.xyz`, `# header\n1 2 3\n${line}\n`);
      expectMessage(loadPoints(xyz), `${xyz}:3: expected "x y z" as three finite decimal numbers, got "${line}"`);
    }
    expect([...unwrap(loadPoints(writeFile('ok.txt', '-1.5 .25 3e-2\n'))).positions]).toEqual([-1.5, 0.25, 0.03]);
  });

  it('validates --voxel-size as a plain positive decimal number, naming the flag and the text', () => {
    expect(unwrap(parseCliOptions(['--voxel-size', '0.25'])).voxelSize).toBe(0.25);
    expect(unwrap(parseCliOptions([]))).toEqual({ input: undefined, voxelSize: 0.1, output: 'out/points.nvdb', codec: 'zip' });
    for (const text of ['', 'abc', '0x10', '-1', '0', 'Infinity', '1e3', ' 1']) {
      expectMessage(parseCliOptions([`--voxel-size=${text}`]), `--voxel-size: expected a positive decimal number such as 0.1, got "${text}"`);
    }
    expectMessage(parseCliOptions(['--codec', 'blosc']), '--codec: expected zip or none, got "blosc"');
    expectMessage(parseCliOptions(['--colour', 'red']), 'options are --input, --voxel-size, --output, --codec');
  });
});

function writeFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function unwrapError<T>(r: Result<T>): { code: ErrorCode; message: string } {
  if (r.ok) throw new Error('expected a failure');
  return r.error;
}

function expectMessage<T>(r: Result<T>, text: string): void {
  expect(unwrapError(r).code).toBe(ErrorCode.InvalidArgument);
  expect(unwrapError(r).message).toContain(text);
}
