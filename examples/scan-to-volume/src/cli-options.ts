import { Command, CommanderError, Option } from 'commander';
import type { NvdbCodec } from '@hs/nanovdb-mr';
import type { PipelineArguments, PipelineOutput } from '@hs/runtime';
import { ErrorCode, err, ok, type Result } from '@hs/streams';
import { MAX_SCAN_RATE_HZ } from './operators/scan-source.js';
import type { GridBuilderKind } from './pipeline.js';
import { MAX_SCANS } from './scan-split.js';
import { DEFAULT_MAX_GRID_BYTES } from './volume-sizing.js';

/** Most sweeps one run streams. */
export const MAX_SWEEPS = 1_000_000;

/** The example's options after validation. */
export interface ScanToVolumeCliOptions {
  /** PLY, XYZ/TXT or LAS file; `undefined` for the bundled Stanford bunny. */
  readonly input: string | undefined;
  /** World units per voxel. */
  readonly voxelSize: number;
  /** Scans per sweep, 1 to `MAX_SCANS`. */
  readonly scans: number;
  /** Sweeps, 1 to `MAX_SWEEPS`. */
  readonly sweeps: number;
  /** Nominal scan rate in Hz, 1 to `MAX_SCAN_RATE_HZ`. */
  readonly rateHz: number;
  /** Output folder (created when the run is prepared). */
  readonly outDir: string;
  readonly codec: NvdbCodec;
  /** Explicit backend, or `undefined` for `HS_BACKEND`, then auto-detection. */
  readonly backend: 'host' | 'cuda' | undefined;
  /** PointsToGrid builder (see `ScanToVolumeOptions.builder`); default `stream`. */
  readonly builder: GridBuilderKind;
  /** Most bytes the volume's grid may take (see `ScanToVolumeOptions.maxGridBytes`); default 256 MiB. */
  readonly maxGridBytes: number;
}

const PLAIN_INTEGER = /^[0-9]+$/;
/** A decimal number in standard notation, exponent allowed (`0.1`, `.5`, `1e-1`, `+2.5E3`): no hex, no Infinity or NaN words. */
const DECIMAL_NUMBER = /^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$/;

/**
 * Parses the example's arguments (without `node` and the script; one leading `--` is skipped) with
 * commander. `--rate`, `--scans` and `--sweeps` take plain decimal integers within their ranges,
 * `--voxel-size` a decimal number in standard notation (`0.1`, `1e-1`, `0.5e0`; no hex) that is finite
 * and greater than 0, `--max-grid-bytes` a plain decimal integer from 1 to 2^53 - 1 (default 268435456,
 * 256 MiB), `--out` a non-empty folder path.
 * @returns the request (`exit` after `--help` or a usage error commander printed to `output`), or
 *   InvalidArgument naming the option, the text given and what is accepted (a voxel size that is not a
 *   number, not finite such as `1e400`, or not above 0, each said apart; an empty `--out`).
 */
export function parseScanToVolumeArguments(args: readonly string[], output: PipelineOutput): Result<PipelineArguments<ScanToVolumeCliOptions>> {
  const program = new Command('scan-to-volume')
    .description('Streams a point cloud as scans into a growing NanoVDB volume, writes it as .nvdb and a depth-shaded PNG preview.')
    .option('--input <file>', 'point cloud: .ply, .xyz/.txt or .las (LAS 1.2-1.4, formats 0-3); default: the bundled Stanford bunny')
    .option('--voxel-size <units>', 'world units per voxel, a number above 0 (0.2, 5e-2)', '0.2')
    .option('--scans <n>', `scans per sweep, azimuth sectors (1 to ${MAX_SCANS})`, '36')
    .option('--sweeps <n>', `sweeps to stream (1 to ${MAX_SWEEPS})`, '1')
    .option('--rate <hz>', `nominal scan rate, whole scans per second (1 to ${MAX_SCAN_RATE_HZ})`, '30')
    .option('--max-grid-bytes <bytes>', 'refuse a volume grid larger than this, checked before any grid is built', String(DEFAULT_MAX_GRID_BYTES))
    .option('--out <dir>', 'output folder for volume.nvdb and preview.png', './out')
    .addOption(new Option('--codec <codec>', '.nvdb codec').choices(['zip', 'none']).default('zip'))
    .addOption(new Option('--backend <name>', 'host (pure TypeScript) or cuda; default: HS_BACKEND, then auto-detect').choices(['host', 'cuda']))
    .addOption(
      new Option('--builder <kind>', 'PointsToGrid builder: stream (bounded build over all points in stream order, GPU kernels on cuda) or host (incremental merge on the host)')
        .choices(['stream', 'host'])
        .default('stream'),
    )
    .exitOverride()
    .configureOutput({
      writeOut: (text) => output.log(text.replace(/\n$/, '')),
      writeErr: (text) => output.error(text.replace(/\n$/, '')),
    });
  try {
    program.parse(args[0] === '--' ? args.slice(1) : [...args], { from: 'user' });
  } catch (thrown) {
    if (thrown instanceof CommanderError) return ok({ kind: 'exit', exitCode: thrown.exitCode });
    throw thrown;
  }
  const raw = program.opts<Record<string, string | undefined>>();
  const integer = (flag: string, text: string, max: number): Result<number> => {
    const value = PLAIN_INTEGER.test(text) ? Number(text) : Number.NaN;
    return value >= 1 && value <= max ? ok(value) : err(ErrorCode.InvalidArgument, `--${flag} must be a plain decimal integer from 1 to ${max}, got '${text}'`);
  };
  const rate = integer('rate', String(raw['rate']), MAX_SCAN_RATE_HZ);
  if (!rate.ok) return rate;
  const scans = integer('scans', String(raw['scans']), MAX_SCANS);
  if (!scans.ok) return scans;
  const sweeps = integer('sweeps', String(raw['sweeps']), MAX_SWEEPS);
  if (!sweeps.ok) return sweeps;
  const maxGridBytes = integer('max-grid-bytes', String(raw['maxGridBytes']), Number.MAX_SAFE_INTEGER);
  if (!maxGridBytes.ok) return maxGridBytes;
  const voxelSize = parseVoxelSize(String(raw['voxelSize']));
  if (!voxelSize.ok) return voxelSize;
  const outDir = String(raw['out']);
  if (outDir === '') return err(ErrorCode.InvalidArgument, "--out must name a folder, got ''; use --out . for the current folder");
  return ok({
    kind: 'build',
    options: {
      input: raw['input'],
      voxelSize: voxelSize.value,
      scans: scans.value,
      sweeps: sweeps.value,
      rateHz: rate.value,
      outDir,
      codec: raw['codec'] as NvdbCodec,
      backend: raw['backend'] as 'host' | 'cuda' | undefined,
      builder: raw['builder'] as GridBuilderKind,
      maxGridBytes: maxGridBytes.value,
    },
  });
}

/** `--voxel-size`: a decimal number in standard notation, finite and greater than 0; each failure said apart. */
function parseVoxelSize(text: string): Result<number> {
  if (!DECIMAL_NUMBER.test(text)) return err(ErrorCode.InvalidArgument, `--voxel-size must be a decimal number such as 0.1 or 1e-1, got '${text}'`);
  const value = Number(text);
  if (!Number.isFinite(value)) return err(ErrorCode.InvalidArgument, `--voxel-size '${text}' is not finite (it exceeds the largest double); use a number such as 0.1`);
  if (!(value > 0)) return err(ErrorCode.InvalidArgument, `--voxel-size must be greater than 0, got '${text}'`);
  return ok(value);
}
