import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bunnyPoints } from '@hs/example-point-cloud-input';
import { HostResource, readNvdb } from '@hs/nanovdb-mr';
import { CudaBackend, HostBackend, unwrap } from '@hs/streams';
import { PNG } from 'pngjs';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli.js';
import { previewCamera } from '../src/grid-preview-kernel.js';
import { PREVIEW_FILE, VOLUME_FILE } from '../src/pipeline.js';
import { distinctVoxels, referencePreview } from './reference-preview.js';

const dir = mkdtempSync(join(tmpdir(), 'hs-scan-to-volume-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(args: readonly string[]) {
  const logs: string[] = [];
  const errors: string[] = [];
  const exitCode = await runCli(['--backend', 'host', ...args], { log: (l) => logs.push(l), error: (l) => errors.push(l) });
  return { exitCode, logs, errors };
}

describe('scan-to-volume on the bundled bunny (host backend)', () => {
  it('writes a .nvdb that hs re-reads with the independently counted voxels, and a deterministic bunny preview', async () => {
    const runs = [];
    // Run a: the default stream builder; run b: the host builder. Their files must be identical.
    for (const [name, builder] of [['a', 'stream'], ['b', 'host']] as const) {
      const out = join(dir, name);
      const { exitCode, logs, errors } = await cli(['--out', out, '--rate', '1000', '--builder', builder]);
      expect(errors).toEqual([]);
      expect(exitCode).toBe(0);
      runs.push({ out, text: logs.join('\n') });
    }
    const { out, text } = runs[0]!;
    const expected = distinctVoxels(bunnyPoints().positions, 0.2);
    expect(text).toContain(`volume: ${expected} active voxels (${expected} expected from the whole cloud)`);
    expect(text).toMatch(/re-read by hs: grid "scan-to-volume", \d+ voxels, \d+ bytes, checksum and structure valid/);
    expect(text).toMatch(/resource \(StatisticsResource\): \d+ allocations \(0 outstanding\), peak \d+ bytes, total \d+ bytes, 0 bytes outstanding/);
    expect(text).toContain('9 previews rendered');
    expect(text).toMatch(/pool backings \(StatisticsResource per memory kind\): pinnedHost 2 allocations, \d+ bytes; cudaDevice 1 allocations, \d+ bytes/);
    expect(text).toMatch(/pool:points-to-grid\.grid +high-water \d\/\d slots +outstanding 0/);
    expect(text).toContain(`builder: stream, one bounded build per scan (capacity 1839 points, `);
    expect(text).toContain(`last build read 1839 of 1839 points, wrote ${expected} voxels`);
    expect(text).toContain('no capacity overflowed');
    expect(text).toMatch(/resource \(StatisticsResource\): 1 allocations \(0 outstanding\)/);
    expect(runs[1]!.text).toContain('builder: host (previous grid merged with each scan on the host)');

    const backend = new HostBackend();
    const [handle] = unwrap(readNvdb(backend, new HostResource(backend), readFileSync(join(out, VOLUME_FILE))));
    const grid = handle!.grid()!;
    expect(grid.voxelCount).toBe(expected);
    const gridBytes = unwrap(handle!.hostBytes()).slice();
    handle!.dispose();
    backend.dispose();

    const png = PNG.sync.read(readFileSync(join(out, PREVIEW_FILE)));
    const camera = previewCamera(grid.indexBBox);
    expect([png.width, png.height]).toEqual([camera.width, camera.height]);
    const grey = Uint8Array.from({ length: png.width * png.height }, (_, i) => png.data[4 * i]!);
    expect(Buffer.compare(grey, referencePreview(gridBytes, camera))).toBe(0);
    const lit = grey.filter((v) => v > 0).length / grey.length;
    expect(lit).toBeGreaterThan(0.2);
    expect(lit).toBeLessThan(0.8);
    const digest = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
    expect(digest(join(runs[1]!.out, PREVIEW_FILE))).toBe(digest(join(out, PREVIEW_FILE)));
    expect(digest(join(runs[1]!.out, VOLUME_FILE))).toBe(digest(join(out, VOLUME_FILE)));
  }, 120_000);

  it('accumulates: a second sweep over the same points leaves the volume unchanged (both builders, same file)', async () => {
    const expected = distinctVoxels(bunnyPoints().positions, 0.5);
    const files = [];
    for (const builder of ['stream', 'host']) {
      const out = join(dir, `sweeps-${builder}`);
      const { exitCode, logs } = await cli(['--out', out, '--rate', '1000', '--scans', '5', '--sweeps', '3', '--voxel-size', '0.5', '--builder', builder]);
      expect(exitCode).toBe(0);
      expect(logs.join('\n')).toContain(`streamed 15 scans (5 per sweep) at 1000 Hz nominal: ${3 * 1839} points`);
      expect(logs.join('\n')).toContain(`volume: ${expected} active voxels`);
      if (builder === 'stream') expect(logs.join('\n')).toContain(`; ${2 * 1839} re-delivered points of later sweeps not appended`);
      files.push(readFileSync(join(out, VOLUME_FILE)));
    }
    expect(Buffer.compare(files[0]!, files[1]!)).toBe(0);
  }, 60_000);
});

describe('a run stopped by its signal (Ctrl-C in main.ts)', () => {
  it('drains, prints the summary of the scans done and exits 130, leaving whole files and no staging file', async () => {
    const out = join(dir, 'interrupted');
    const logs: string[] = [];
    const errors: string[] = [];
    const interrupt = new AbortController();
    // Abort once the first volume and the first (quarter-rate) preview are on disk, long before the 3600
    // scans at 1000 Hz are done; on a loaded machine the volume can land a few scans before the preview.
    const watch = setInterval(() => existsSync(join(out, VOLUME_FILE)) && existsSync(join(out, PREVIEW_FILE)) && interrupt.abort(), 5);
    const exitCode = await runCli(['--backend', 'host', '--out', out, '--rate', '1000', '--sweeps', '100'], { log: (l) => logs.push(l), error: (l) => errors.push(l) }, interrupt.signal);
    clearInterval(watch);
    expect([exitCode, errors]).toEqual([130, []]);
    const text = logs.join('\n');
    expect(text).toMatch(/^volume of the \d+ scans done \(the run ended before its 3600 scans\): [1-9]\d* active voxels/m);
    expect(text).toMatch(/checksum and structure valid/);
    expect(readdirSync(out).sort()).toEqual([PREVIEW_FILE, VOLUME_FILE]);
  }, 60_000);
});

describe('runs that share an output folder', () => {
  it('two runs into the same --out at once both succeed and leave one whole volume, no staging files', async () => {
    const out = join(dir, 'same');
    // The folder exists, as after an earlier run (two runs that both create it race in createOutputDirectory).
    mkdirSync(out);
    const args = ['--out', out, '--rate', '1000', '--scans', '6', '--sweeps', '3', '--voxel-size', '0.5'];
    const runs = await Promise.all([cli(args), cli(args)]);
    expect(runs.map((r) => [r.exitCode, r.errors])).toEqual([
      [0, []],
      [0, []],
    ]);
    expect(readdirSync(out).sort()).toEqual([PREVIEW_FILE, VOLUME_FILE]);
  }, 120_000);
});

describe('a shared --out another user planted files in', () => {
  it('replaces a symlink planted at the volume path (its target untouched) and removes staging files of dead runs', async () => {
    const out = join(dir, 'planted');
    mkdirSync(out);
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'not a grid');
    symlinkSync(victim, join(out, VOLUME_FILE));
    const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    await new Promise((resolve) => child.on('exit', resolve));
    const stale = `${VOLUME_FILE}.${child.pid}.0123456789abcdef.hs-staging`;
    writeFileSync(join(out, stale), 'half a grid');
    const { exitCode, errors } = await cli(['--out', out, '--rate', '1000', '--scans', '4', '--voxel-size', '0.5']);
    expect([exitCode, errors]).toEqual([0, []]);
    expect(readFileSync(victim, 'utf8')).toBe('not a grid');
    expect(lstatSync(join(out, VOLUME_FILE)).isFile()).toBe(true);
    expect(readdirSync(out).sort()).toEqual([PREVIEW_FILE, VOLUME_FILE]);
  }, 60_000);

  it('refuses a symlinked --out, writing nothing where it points', async () => {
    const real = join(dir, 'someone-elses');
    mkdirSync(real);
    const link = join(dir, 'out-link');
    symlinkSync(real, link);
    const { exitCode, errors } = await cli(['--out', link, '--rate', '1000', '--scans', '4', '--voxel-size', '0.5']);
    expect(exitCode).toBe(1);
    expect(errors).toEqual([expect.stringMatching(/^scan-to-volume: InvalidArgument: --out: output folder .* is a symbolic link/)]);
    expect(readdirSync(real)).toEqual([]);
  });
});

describe('bad values are a usage error: one typed line, the hint and exit code 2', () => {
  const WHOLE = 'a whole number';
  const NUMBER = 'a finite number';
  it.each([
    ['rate 0', ['--rate', '0'], `--rate takes ${WHOLE} from 1 to 100000`, '0'],
    ['a fractional rate', ['--rate', '2.5'], `--rate takes ${WHOLE} from 1 to 100000`, '2.5'],
    ['a rate above the range', ['--rate', '100001'], `--rate takes ${WHOLE} from 1 to 100000`, '100001'],
    ['a non-numeric rate', ['--rate', 'fast'], `--rate takes ${WHOLE} from 1 to 100000`, 'fast'],
    ['scans 0', ['--scans', '0'], `--scans takes ${WHOLE} from 1 to 3600`, '0'],
    ['a negative voxel size', ['--voxel-size', '-1'], `--voxel-size takes ${NUMBER} above 0`, '-1'],
    ['a zero voxel size', ['--voxel-size', '0'], `--voxel-size takes ${NUMBER} above 0`, '0'],
    ['an infinite voxel size', ['--voxel-size', '1e400'], `--voxel-size takes ${NUMBER} above 0`, '1e400'],
    ['a hex voxel size', ['--voxel-size', '0x10'], `--voxel-size takes ${NUMBER} above 0`, '0x10'],
    ['Infinity', ['--voxel-size', 'Infinity'], `--voxel-size takes ${NUMBER} above 0`, 'Infinity'],
    ['a dangling exponent', ['--voxel-size', '1e'], `--voxel-size takes ${NUMBER} above 0`, '1e'],
    ['a max grid size of 0', ['--max-grid-bytes', '0'], `--max-grid-bytes takes ${WHOLE} from 1 to 9007199254740991`, '0'],
    ['a max grid size in MiB', ['--max-grid-bytes', '256M'], `--max-grid-bytes takes ${WHOLE} from 1 to 9007199254740991`, '256M'],
    ['a max grid size with separators', ['--max-grid-bytes', '1_000'], `--max-grid-bytes takes ${WHOLE} from 1 to 9007199254740991`, '1_000'],
  ])('%s', async (_, args, what, text) => {
    const out = join(dir, 'never');
    const { exitCode, logs, errors } = await cli([...args, '--out', out]);
    expect({ exitCode, logs, errors }).toEqual({
      exitCode: 2,
      logs: [],
      errors: [`scan-to-volume: InvalidArgument: ${what} in standard notation (${what.includes(WHOLE) ? '30, 1e3' : '30, 0.25, 5e-2'}), got '${text}'`, 'hint: scan-to-volume --help lists the options'],
    });
  });

  it('an unknown builder is answered by commander with the choices, the hint and exit code 2', async () => {
    const { exitCode, errors } = await cli(['--builder', 'gpu']);
    expect(exitCode).toBe(2);
    expect(errors).toEqual(["scan-to-volume: option '--builder <kind>' argument 'gpu' is invalid. Allowed choices are stream, host.", 'hint: scan-to-volume --help lists the options']);
  });
});

describe('bad input is one typed line and exit code 1', () => {
  const write = (name: string, bytes: string | Uint8Array): string => {
    const path = join(dir, name);
    writeFileSync(path, bytes);
    return path;
  };

  it.each([
    ['a missing file', () => ['--input', join(dir, 'missing.ply')], /^scan-to-volume: NotFound: cannot read .*missing\.ply: ENOENT/],
    ['a malformed PLY', () => ['--input', write('bad.ply', 'ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nend_header\n1\n2\n')], /^scan-to-volume: InvalidArgument: .*bad\.ply: the PLY vertex element has no "y", "z" property/],
    ['a file that is not PLY', () => ['--input', write('junk.ply', 'hello')], /^scan-to-volume: InvalidArgument: .*junk\.ply is not a readable PLY file/],
    ['a malformed LAS', () => ['--input', write('bad.las', 'LASF but far too short')], /^scan-to-volume: InvalidArgument: .*bad\.las: truncated LAS header: 22 bytes/],
    ['zero points', () => ['--input', write('empty.xyz', '# no points\n')], /^scan-to-volume: InvalidArgument: .*empty\.xyz holds no points$/],
    ['a non-finite point', () => ['--input', write('inf.xyz', '1 2 3\n4 5 1e999\n')], /^scan-to-volume: InvalidArgument: .*inf\.xyz:2: expected "x y z" as three finite decimal numbers/],
    // The bunny has no NaN: every voxel index is beyond the 32-bit range, and the message says so.
    [
      'a voxel size so small that voxel indices overflow',
      () => ['--voxel-size', '0.00000000001'],
      /^scan-to-volume: InvalidArgument: Stanford bunny.*: sizing the volume: countGridNodes: point 0 \(.+\) maps to a voxel index outside the 32-bit range \(-2\^31 to 2\^31 - 1\) at voxel size 1e-11; use a larger voxel size/,
    ],
    [
      'an XYZ point whose voxel index overflows, named by file and line',
      () => ['--input', write('far.xyz', '# far away\n1 2 3\n\n1e300 0 0\n')],
      /^scan-to-volume: InvalidArgument: .*far\.xyz:4: sizing the volume: countGridNodes: point 1 \(1e\+300, 0, 0\) maps to a voxel index outside the 32-bit range/,
    ],
    // Every point its own upper node (270 400 bytes each): a 560 MB grid and 4.4 GB of RSS before the cap.
    [
      'a voxel size that makes a grid above the default 256 MiB cap',
      () => ['--voxel-size', '0.0000001'],
      /^scan-to-volume: InvalidArgument: Stanford bunny.*: voxel size 1e-7 gives a \d+-byte grid \(\d+\.\d MiB: 1839 upper, 1839 lower nodes, 1839 leaves\), above --max-grid-bytes 268435456; use a larger --voxel-size or raise --max-grid-bytes$/,
    ],
    ['a grid above a lowered cap', () => ['--voxel-size', '0.5', '--max-grid-bytes', '1000'], /^scan-to-volume: InvalidArgument: .*: voxel size 0\.5 gives a \d+-byte grid .*, above --max-grid-bytes 1000; use a larger --voxel-size/],
  ])('%s', async (_, args, message) => {
    const out = join(dir, 'never');
    const { exitCode, logs, errors } = await cli([...args(), '--out', out]);
    expect(exitCode).toBe(1);
    expect(logs).toEqual([]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(message);
  });

  // Node's recursive mkdir never returns for a folder under /proc; the example used to hang there.
  it.skipIf(process.platform !== 'linux')('an --out under /proc is one typed line before anything is printed, not a hang', async () => {
    const { exitCode, logs, errors } = await cli(['--out', '/proc/hs-no-such-folder/out']);
    expect(exitCode).toBe(1);
    expect(logs).toEqual([]);
    expect(errors).toEqual(['scan-to-volume: InvalidArgument: --out: cannot create /proc/hs-no-such-folder/out: ENOENT']);
  });

  it.skipIf(CudaBackend.available())('a backend that cannot start (--backend cuda without a GPU) leaves no output folder behind', async () => {
    const out = join(dir, 'no-gpu');
    const { exitCode, logs, errors } = await cli(['--backend', 'cuda', '--out', out]);
    expect(exitCode).toBe(1);
    expect(logs).toEqual([]);
    expect(errors).toEqual([expect.stringMatching(/^scan-to-volume: NotSupported: .*use the host backend/)]);
    expect(existsSync(out)).toBe(false);
  });

  it.each([VOLUME_FILE, PREVIEW_FILE])('an output file that cannot be written (%s is a folder) fails the run and leaves no staging file', async (file) => {
    const out = join(dir, `taken-${file}`);
    mkdirSync(join(out, file), { recursive: true });
    const { exitCode, errors } = await cli(['--out', out, '--rate', '1000', '--scans', '4', '--voxel-size', '0.5']);
    expect(exitCode).toBe(1);
    expect(errors).toEqual([expect.stringMatching(new RegExp(`^scan-to-volume: InvalidArgument: .*cannot write ${join(out, file).replaceAll('.', '\\.')}: EISDIR`))]);
    expect(readdirSync(out).filter((name) => name.endsWith('.hs-staging'))).toEqual([]);
    expect(readdirSync(join(out, file))).toEqual([]);
  });

  it('an unknown option is answered by commander with the hint and exit code 2', async () => {
    const { exitCode, errors } = await cli(['--colour', 'red']);
    expect(exitCode).toBe(2);
    expect(errors).toEqual(["scan-to-volume: unknown option '--colour'", 'hint: scan-to-volume --help lists the options']);
  });
});

describe('--devices: the build split by space (host backend emulating the devices)', () => {
  it('writes the same volume.nvdb and preview.png as the one-device run on 2, 3 and repeated devices, and says how it split', async () => {
    const digest = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
    const args = ['--rate', '1000', '--scans', '12', '--sweeps', '2'];
    const one = await cli(['--out', join(dir, 'devices-one'), ...args]);
    expect([one.exitCode, one.errors]).toEqual([0, []]);
    for (const devices of ['0,1', '0,1,2', '0,0']) {
      const out = join(dir, `devices-${devices}`);
      const { exitCode, logs, errors } = await cli(['--out', out, ...args, '--devices', devices]);
      expect([exitCode, errors]).toEqual([0, []]);
      const text = logs.join('\n');
      const parts = devices.split(',');
      expect(text).toContain(`split by space into ${parts.length} parts by root tile, merged on the host every scan: part 0 on cuda:${parts[0]} `);
      expect(text).toMatch(/checksum and structure valid/);
      for (const file of [VOLUME_FILE, PREVIEW_FILE]) expect(digest(join(out, file)), `${devices} ${file}`).toBe(digest(join(dir, 'devices-one', file)));
    }
  }, 120_000);

  it('refuses a bad --devices as a usage error naming the option', async () => {
    const { exitCode, errors } = await cli(['--out', join(dir, 'devices-bad'), '--devices', '0,x']);
    expect(exitCode).toBe(2);
    expect(errors[0]).toContain("--devices must be 1 to 16 comma-separated CUDA device ordinals from 0 to 63 (0,1 or 0,0 for two parts on one device), got '0,x'");
    expect(existsSync(join(dir, 'devices-bad'))).toBe(false);
  });
});
