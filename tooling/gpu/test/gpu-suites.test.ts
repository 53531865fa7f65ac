// Host-only (runs in CI, no GPU): the one GPU suite list and the command lines of pnpm test:gpu and
// run-on-device.sh that read it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { GPU_PACKED_EXTRAS, GPU_SUITE_FILES, GPU_SUITE_NAMES, GPU_SUITES, parseGpuArgs, SANITIZER_TOOLS, UsageError } from '../src/gpu-suites.mjs';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const gpuDir = fileURLToPath(new URL('..', import.meta.url));

function usageError(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error('expected a UsageError');
}

/** Repository-relative test files under `dir` (recursively, outside node_modules) whose name matches. */
function testFiles(dir: string, match: RegExp): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) found.push(...testFiles(path, match));
    else if (match.test(entry.name)) found.push(path);
  }
  return found;
}

describe('the GPU suite list (src/gpu-suites.mjs)', () => {
  it('names files that exist, suites and packed extras alike', () => {
    const entries = [...GPU_SUITE_FILES, ...GPU_PACKED_EXTRAS.map((e) => (typeof e === 'string' ? e : e.in))];
    expect(entries.filter((file) => !existsSync(join(root, file)))).toEqual([]);
  });

  it('gives every suite a unique name, its file name without .test.ts, and the folder vitest runs it in', () => {
    expect(new Set(GPU_SUITE_NAMES).size).toBe(GPU_SUITE_NAMES.length);
    const streams = GPU_SUITES.find((s) => s.name === 'cuda-backend-conformance');
    expect(streams).toEqual({ name: 'cuda-backend-conformance', file: 'packages/streams/test/cuda-backend-conformance.test.ts', packageDir: 'packages/streams', testFile: 'test/cuda-backend-conformance.test.ts' });
    for (const s of GPU_SUITES) {
      expect(existsSync(join(root, s.packageDir, 'package.json')), s.file).toBe(true);
      expect(join(s.packageDir, s.testFile)).toBe(s.file);
    }
  });

  it('holds every CUDA suite of the tree (*.cuda.test.ts, *-cuda.test.ts) and every device suite of tooling/gpu', () => {
    const cuda = ['packages', 'tooling', 'examples'].flatMap((dir) => testFiles(dir, /(\.|-)cuda\.test\.ts$/));
    const gpu = testFiles('tooling/gpu/test', /\.test\.ts$/).filter((f) => !f.endsWith('/gpu-suites.test.ts'));
    expect([...new Set([...cuda, ...gpu])].filter((f) => !GPU_SUITE_FILES.includes(f))).toEqual([]);
  });
});

describe('pnpm test:gpu arguments', () => {
  it('runs everything plainly without arguments', () => {
    expect(parseGpuArgs([])).toEqual({ help: false, mode: null, only: [], sanitize: [], sanitizeGiven: false });
  });

  it('takes --only and --sanitize as comma lists, with a space or =, repeated', () => {
    const args = parseGpuArgs(['--only', 'cuda-backend-conformance,points-to-grid-cuda', '--only=soak.cuda', '--sanitize', 'memcheck,racecheck']);
    expect(args.only).toEqual(['cuda-backend-conformance', 'points-to-grid-cuda', 'soak.cuda']);
    expect(args.sanitize).toEqual(['memcheck', 'racecheck']);
    expect(parseGpuArgs(['--sanitize=initcheck']).sanitize).toEqual(['initcheck']);
  });

  it('refuses unknown suites and tools, listing the valid names', () => {
    const suite = usageError(() => parseGpuArgs(['--only', 'cuda-backend,nope']));
    expect(suite).toContain('unknown suite "nope"');
    for (const name of GPU_SUITE_NAMES) expect(suite).toContain(name);
    const tool = usageError(() => parseGpuArgs(['--sanitize', 'memchek']));
    expect(tool).toBe(`unknown tool "memchek" for --sanitize; valid tools: ${SANITIZER_TOOLS.join(', ')}`);
  });

  it('refuses a flag without its value, unknown options and bare suite names', () => {
    expect(usageError(() => parseGpuArgs(['--only']))).toBe('--only needs a value');
    expect(usageError(() => parseGpuArgs(['--only', '--sanitize', 'memcheck']))).toBe('--only needs a value');
    expect(usageError(() => parseGpuArgs(['--only='])).startsWith('--only needs at least one suite name')).toBe(true);
    expect(usageError(() => parseGpuArgs(['--tool', 'memcheck']))).toBe('unknown option --tool');
    expect(usageError(() => parseGpuArgs(['cuda-backend']))).toContain('suites go after --only');
  });

  it('answers a bad command line with exit 2 and the valid names before looking for a device', () => {
    const r = spawnSync(process.execPath, ['src/test-gpu.mjs', '--only', 'nope'], { cwd: gpuDir, encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('unknown suite "nope"');
    expect(r.stderr).toContain('usage: pnpm test:gpu');
    expect(r.stderr).not.toContain('no usable CUDA device');
  });
});

describe('run-on-device.sh arguments', () => {
  const device = (argv: string[], env: Record<string, string> = {}) => parseGpuArgs(argv, { device: true, env });

  it('takes a mode (default all), --only, --sanitize, and the older suite names after the mode', () => {
    expect(device([])).toMatchObject({ mode: 'all', only: [], sanitize: [], sanitizeGiven: false });
    expect(device(['tests', '--only', 'cuda-backend-conformance,points-to-grid-cuda', '--sanitize', 'memcheck'])).toMatchObject({
      mode: 'tests',
      only: ['cuda-backend-conformance', 'points-to-grid-cuda'],
      sanitize: ['memcheck'],
      sanitizeGiven: true,
    });
    expect(device(['tests', 'ipc-two-process', 'cuda-backend-conformance']).only).toEqual(['ipc-two-process', 'cuda-backend-conformance']);
    expect(device(['--only', 'soak.cuda', 'sanitize']).mode).toBe('sanitize');
  });

  it('reads $TOOLS for the tools when --sanitize is absent, and --sanitize wins', () => {
    expect(device(['sanitize'], { TOOLS: 'memcheck initcheck' })).toMatchObject({ sanitize: ['memcheck', 'initcheck'], sanitizeGiven: false });
    expect(device(['sanitize', '--sanitize', 'racecheck'], { TOOLS: 'memcheck' }).sanitize).toEqual(['racecheck']);
    expect(usageError(() => device(['sanitize'], { TOOLS: 'memcheck bogus' }))).toContain('unknown tool "bogus" for TOOLS');
  });

  it('refuses unknown modes and suites, listing the valid ones', () => {
    expect(usageError(() => device(['sanitise']))).toContain('unknown mode "sanitise"; valid modes: tests, sanitize, pipeline, bench, all, soak');
    expect(usageError(() => device(['tests', 'nope']))).toContain('unknown suite "nope"');
  });

  it('the script stops with exit 2 and the valid names on a bad command line, before touching .gpu or $OUT', () => {
    const out = mkdtempSync(join(tmpdir(), 'hs-gpu-args-'));
    try {
      const r = spawnSync('bash', [resolve(gpuDir, 'run-on-device.sh'), 'tests', '--only', 'cuda-backend-conformance,nope', '--sanitize', 'memcheck'], {
        encoding: 'utf8',
        env: { ...process.env, OUT: join(out, 'gpu-out') },
      });
      expect(r.status).toBe(2);
      expect(r.stderr).toContain('run-on-device.sh: unknown suite "nope" for --only; valid suites: ');
      for (const name of GPU_SUITE_NAMES) expect(r.stderr).toContain(name);
      expect(existsSync(join(out, 'gpu-out'))).toBe(false);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
