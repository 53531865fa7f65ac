import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { parseScanToVolumeArguments } from '../src/cli-options.js';

const quiet = { log: () => {}, error: () => {} };
const parse = (...args: string[]) => parseScanToVolumeArguments(args, quiet);

describe('scan-to-volume options', () => {
  it.each([
    ['0.1', 0.1],
    ['1e-1', 0.1],
    ['0.5e0', 0.5],
    ['.25', 0.25],
    ['2E+1', 20],
    ['+3', 3],
    ['1e-300', 1e-300],
  ])('accepts --voxel-size %s in standard number notation', (text, value) => {
    const parsed = parse('--voxel-size', text);
    expect(parsed.ok && parsed.value.kind === 'build' && parsed.value.options.voxelSize).toBe(value);
  });

  it.each(['1e400', '-1', '0', '0x10', 'Infinity', 'NaN', '1e', '1_0', ''])('refuses --voxel-size %j with the one number message', (text) => {
    const parsed = parse('--voxel-size', text);
    expect(parsed.ok ? undefined : parsed.error.message).toBe(`InvalidArgument: --voxel-size takes a finite number above 0 in standard notation (30, 0.25, 5e-2), got '${text}'`);
  });

  it.each([
    ['--sweeps', '1e2', 'sweeps', 100],
    ['--max-grid-bytes', '1e9', 'maxGridBytes', 1e9],
    ['--rate', '3e1', 'rateHz', 30],
  ] as const)('accepts %s %s (a whole number in exponent notation)', (flag, text, key, value) => {
    const parsed = parse(flag, text);
    expect(parsed.ok && parsed.value.kind === 'build' && parsed.value.options[key]).toBe(value);
  });

  it('resolves --input and --out against INIT_CWD when the package manager set it, else the working directory, and defaults --out to ./out/scan-to-volume there', () => {
    vi.stubEnv('INIT_CWD', '/home/user/project');
    try {
      const parsed = parse('--input', 'scans/cloud.ply', '--out', 'results');
      expect(parsed.ok && parsed.value.kind === 'build' && [parsed.value.options.input, parsed.value.options.outDir]).toEqual(['/home/user/project/scans/cloud.ply', '/home/user/project/results']);
      const defaults = parse();
      expect(defaults.ok && defaults.value.kind === 'build' && defaults.value.options.outDir).toBe('/home/user/project/out/scan-to-volume');
      vi.stubEnv('INIT_CWD', undefined);
      const plain = parse('--out', 'results');
      expect(plain.ok && plain.value.kind === 'build' && plain.value.options.outDir).toBe(join(process.cwd(), 'results'));
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('drops every standalone -- (pnpm passes one through) and answers --help with exit 0, an unknown option with 2', () => {
    const parsed = parse('--', '--sweeps', '2', '--', '--scans', '4');
    expect(parsed.ok && parsed.value.kind === 'build' && [parsed.value.options.sweeps, parsed.value.options.scans]).toEqual([2, 4]);
    expect(parse('--help')).toEqual({ ok: true, value: { kind: 'exit', exitCode: 0 } });
    expect(parse('--', '--frobnicate')).toEqual({ ok: true, value: { kind: 'exit', exitCode: 2 } });
  });

  it('refuses an empty --out instead of writing into the current folder', () => {
    const parsed = parse('--out', '');
    expect(parsed.ok ? undefined : parsed.error.message).toBe("InvalidArgument: --out must name a folder, got ''; use --out . for the current folder");
    vi.stubEnv('INIT_CWD', '/home/user/project');
    try {
      const dot = parse('--out', '.');
      expect(dot.ok && dot.value.kind === 'build' && dot.value.options.outDir).toBe('/home/user/project');
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

describe('scan-to-volume --devices', () => {
  it.each([
    ['0', [0]],
    ['0,1', [0, 1]],
    ['0,0', [0, 0]],
    ['2, 0,1', [2, 0, 1]],
  ])('accepts --devices %s', (text, devices) => {
    const parsed = parse('--devices', text);
    expect(parsed.ok && parsed.value.kind === 'build' && parsed.value.options.devices).toEqual(devices);
  });

  it('leaves devices undefined by default (one device, cuda:0)', () => {
    const parsed = parse();
    expect(parsed.ok && parsed.value.kind === 'build' && parsed.value.options.devices).toBe(undefined);
  });

  it.each(['', '0,', ',1', '-1', '1.5', 'a', '64', '01', '0;1', Array.from({ length: 17 }, () => '0').join(',')])('refuses --devices %j naming the option and what it accepts', (text) => {
    const parsed = parse('--devices', text);
    expect(parsed.ok ? undefined : parsed.error.message).toBe(
      `InvalidArgument: --devices must be 1 to 16 comma-separated CUDA device ordinals from 0 to 63 (0,1 or 0,0 for two parts on one device), got '${text}'`,
    );
  });
});
