import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { ErrorCode, HostBackend, unwrap, type Result } from '@hs/streams';
import { HostResource, readNvdb } from '@hs/nanovdb-mr';
import { buildGrid } from '../src/build-grid.js';
import { type CliOptions, type CliRequest, parseCliArguments } from '../src/cli-options.js';
import { bunnyPoints } from '@hs/example-point-cloud-input';

const dir = mkdtempSync(join(tmpdir(), 'hs-points-to-grid-'));

describe('points-to-grid example', () => {
  it('builds the bunny, writes a .nvdb that reads back, and returns every allocation', async () => {
    const output = join(dir, 'new', 'deeper', 'bunny.nvdb');
    const lines = await buildGrid({ cloud: bunnyPoints(), voxelSize: 0.1, output: join(dir, 'new', 'deeper', 'bunny.nvdb'), codec: 'zip', maxGridBytes: 256 * 2 ** 20 });
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

  it('replaces a symlink planted at --output (its target untouched) and refuses a symlinked folder', async () => {
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'precious');
    const output = join(dir, 'planted.nvdb');
    symlinkSync(victim, output);
    await buildGrid({ cloud: bunnyPoints(), voxelSize: 0.5, output, codec: 'none', maxGridBytes: 256 * 2 ** 20 });
    expect(readFileSync(victim, 'utf8')).toBe('precious');
    expect(lstatSync(output).isFile()).toBe(true);
    mkdirSync(join(dir, 'real'));
    symlinkSync(join(dir, 'real'), join(dir, 'linked'));
    const r = buildGrid({ cloud: bunnyPoints(), voxelSize: 0.5, output: join(dir, 'linked', 'g.nvdb'), codec: 'none', maxGridBytes: 256 * 2 ** 20 });
    await expect(r).rejects.toMatchObject({ code: ErrorCode.InvalidArgument, message: expect.stringContaining('is a symbolic link') });
  });

  it('reports a non-finite coordinate with the point number', async () => {
    const r = buildGrid({ cloud: { positions: new Float64Array([1, 2, 3, Infinity, 0, 0]), source: 'test' }, voxelSize: 1, output: join(dir, 'nan.nvdb'), codec: 'none', maxGridBytes: 256 * 2 ** 20 });
    await expect(r).rejects.toThrow('point 1 has a non-finite coordinate');
  });

  it.each([
    ['a directory', () => dir, 'EISDIR'],
    // A device is refused before anything is written (a staging file renamed over it would replace it).
    ...(existsSync('/dev/full') ? [['a device', () => '/dev/full', 'it is a character device'] as const] : []),
  ] as const)('an unwritable --output (%s) is a one-line typed error with the OS code', async (_, output, code) => {
    const r = buildGrid({ cloud: bunnyPoints(), voxelSize: 0.5, output: output(), codec: 'none', maxGridBytes: 256 * 2 ** 20 });
    await expect(r).rejects.toMatchObject({ code: ErrorCode.InvalidArgument, message: expect.stringMatching(new RegExp(`^InvalidArgument: cannot write [^\\n]+: (${code})\\b[^\\n]*$`)) });
  });

  it.each([
    ['a path under a file', (): string => join(writeFile('plain.txt', 'x'), 'out.nvdb'), 'ENOTDIR'],
    ['a folder under /proc (Node\'s recursive mkdir would spin there)', (): string => '/proc/hs-points-to-grid-nope/g.nvdb', 'ENOENT'],
  ] as const)('an --out folder that cannot be made (%s) is a one-line typed error, before any grid is built', async (_, output, code) => {
    const r = buildGrid({ cloud: bunnyPoints(), voxelSize: 0.5, output: output(), codec: 'none', maxGridBytes: 256 * 2 ** 20 });
    await expect(r).rejects.toMatchObject({ code: ErrorCode.InvalidArgument, message: expect.stringMatching(new RegExp(`^InvalidArgument: --out: cannot create .+: ${code}$`)) });
  });

  it('validates --voxel-size as a number above 0 in standard notation, naming the flag and the text', () => {
    expect(options(['--voxel-size', '0.25']).voxelSize).toBe(0.25);
    expect(options(['--voxel-size', '5e-2']).voxelSize).toBe(0.05);
    vi.stubEnv('INIT_CWD', '/home/user/project');
    try {
      expect(options([])).toEqual({ input: undefined, voxelSize: 0.1, output: '/home/user/project/out/points-to-grid/points.nvdb', codec: 'zip', maxGridBytes: 268435456 });
    } finally {
      vi.unstubAllEnvs();
    }
    for (const text of ['', 'abc', '0x10', '-1', '0', 'Infinity', 'NaN', '1_0', ' 1']) {
      expectMessage(parse([`--voxel-size=${text}`]), `--voxel-size takes a finite number above 0 in standard notation (30, 0.25, 5e-2), got '${text}'`);
    }
  });

  it('answers an unknown option, a bad --codec and --help through commander (exit 2 and 0), dropping every standalone --', () => {
    const errors: string[] = [];
    const quiet = { log: () => undefined, error: (line: string) => errors.push(line) };
    expect(parseCliArguments(['--codec', 'blosc'], quiet)).toEqual({ ok: true, value: { kind: 'exit', exitCode: 2 } });
    expect(errors).toEqual(["points-to-grid: option '--codec <codec>' argument 'blosc' is invalid. Allowed choices are zip, none.", 'hint: points-to-grid --help lists the options']);
    expect(parseCliArguments(['--colour', 'red'], quiet)).toEqual({ ok: true, value: { kind: 'exit', exitCode: 2 } });
    expect(parseCliArguments(['--help'], quiet)).toEqual({ ok: true, value: { kind: 'exit', exitCode: 0 } });
    vi.stubEnv('INIT_CWD', '/home/user/project');
    try {
      expect(options(['--', '--input', 'x.ply', '--', '--out', '/data'])).toMatchObject({ input: '/home/user/project/x.ply', output: '/data/points.nvdb' });
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('--max-grid-bytes defaults to 256 MiB, as scan-to-volume\'s, and takes a whole number of bytes in standard notation', () => {
    expect(options(['--max-grid-bytes', '1000000']).maxGridBytes).toBe(1_000_000);
    expect(options(['--max-grid-bytes', '1e9']).maxGridBytes).toBe(1e9);
    for (const text of ['', '0', '-1', '1.5', '0x10', '9007199254740992', '1_000']) {
      expectMessage(parse([`--max-grid-bytes=${text}`]), `--max-grid-bytes takes a whole number from 1 to 9007199254740991 in standard notation (30, 1e3), got '${text}'`);
    }
  });

  it('refuses a grid above --max-grid-bytes, naming its size and the cap, and writes no file', async () => {
    // the voxel size of issue 24's 2.46 GB grid, on the bunny
    const r = buildGrid({ cloud: bunnyPoints(), voxelSize: 1e-7, output: join(dir, 'huge.nvdb'), codec: 'none', maxGridBytes: 256 * 2 ** 20 });
    await expect(r).rejects.toMatchObject({
      code: ErrorCode.InvalidArgument,
      message: expect.stringMatching(/^InvalidArgument: pointsToGrid: the grid takes \d+ bytes \(\d+\.\d MiB: \d+ upper, \d+ lower nodes, \d+ leaves\), above maxGridBytes 268435456; use a larger voxel size/),
    });
    expect(existsSync(join(dir, 'huge.nvdb'))).toBe(false);
  });
});

/** Parses with the output thrown away. */
function parse(args: readonly string[]): Result<CliRequest> {
  return parseCliArguments(args, { log: () => undefined, error: () => undefined });
}

/** The options of a command line that parses to a run. */
function options(args: readonly string[]): CliOptions {
  const request = unwrap(parse(args));
  if (request.kind !== 'run') throw new Error(`expected a run, got exit ${request.exitCode}`);
  return request.options;
}

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
