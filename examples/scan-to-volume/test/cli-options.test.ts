import { describe, expect, it } from 'vitest';
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

  it.each([
    ['1e400', "InvalidArgument: --voxel-size '1e400' is not finite (it exceeds the largest double); use a number such as 0.1"],
    ['-1', "InvalidArgument: --voxel-size must be greater than 0, got '-1'"],
    ['0', "InvalidArgument: --voxel-size must be greater than 0, got '0'"],
    ['0x10', "InvalidArgument: --voxel-size must be a decimal number such as 0.1 or 1e-1, got '0x10'"],
    ['Infinity', "InvalidArgument: --voxel-size must be a decimal number such as 0.1 or 1e-1, got 'Infinity'"],
    ['1e', "InvalidArgument: --voxel-size must be a decimal number such as 0.1 or 1e-1, got '1e'"],
  ])('refuses --voxel-size %s, saying why', (text, message) => {
    const parsed = parse('--voxel-size', text);
    expect(parsed.ok ? undefined : parsed.error.message).toBe(message);
  });

  it('refuses an empty --out instead of writing into the current folder', () => {
    const parsed = parse('--out', '');
    expect(parsed.ok ? undefined : parsed.error.message).toBe("InvalidArgument: --out must name a folder, got ''; use --out . for the current folder");
    const dot = parse('--out', '.');
    expect(dot.ok && dot.value.kind === 'build' && dot.value.options.outDir).toBe('.');
  });
});
