import { Option } from 'commander';
import { createProgram, defaultOutDir, parseNumberOption, parseOptions, resolveUserPath } from '@hs/cli-options';
import type { NvdbCodec } from '@hs/nanovdb-mr';
import type { PipelineArguments, PipelineOutput } from '@hs/runtime';
import { ErrorCode, err, ok, type Result } from '@hs/streams';
import { MAX_SCAN_RATE_HZ } from './operators/scan-source.js';
import { MAX_SPLIT_PARTS, type GridBuilderKind } from './pipeline.js';
import { MAX_SCANS } from './scan-split.js';
import { DEFAULT_MAX_GRID_BYTES } from './volume-sizing.js';

/** Most sweeps one run streams. */
export const MAX_SWEEPS = 1_000_000;

/** The example's options after validation. */
export interface ScanToVolumeCliOptions {
  /** PLY, XYZ/TXT or LAS file, absolute; `undefined` for the bundled Stanford bunny. */
  readonly input: string | undefined;
  /** World units per voxel. */
  readonly voxelSize: number;
  /** Scans per sweep, 1 to `MAX_SCANS`. */
  readonly scans: number;
  /** Sweeps, 1 to `MAX_SWEEPS`. */
  readonly sweeps: number;
  /** Nominal scan rate in Hz, 1 to `MAX_SCAN_RATE_HZ`. */
  readonly rateHz: number;
  /** Output folder, absolute (created when the run is prepared). */
  readonly outDir: string;
  readonly codec: NvdbCodec;
  /** Explicit backend, or `undefined` for `HS_BACKEND`, then auto-detection. */
  readonly backend: 'host' | 'cuda' | undefined;
  /** PointsToGrid builder (see `ScanToVolumeOptions.builder`); default `stream`. */
  readonly builder: GridBuilderKind;
  /** Most bytes the volume's grid may take (see `ScanToVolumeOptions.maxGridBytes`); default 256 MiB. */
  readonly maxGridBytes: number;
  /**
   * CUDA device ordinals to split the build across (`--devices 0,1`; see `ScanToVolumeOptions.devices`), or
   * `undefined` for the default one device, cuda:0.
   */
  readonly devices: readonly number[] | undefined;
}

/** Highest device ordinal `--devices` accepts. */
export const MAX_DEVICE_ORDINAL = 63;

/**
 * Parses `--devices`: 1 to `MAX_SPLIT_PARTS` CUDA device ordinals (0 to `MAX_DEVICE_ORDINAL`), comma-separated,
 * a repeated one allowed (`0,0`: two parts on one device).
 * @returns the ordinals; InvalidArgument naming the option, the text given and what is accepted.
 */
export function parseDevicesOption(text: string): Result<readonly number[]> {
  const entries = text.split(',');
  const bad = entries.length > MAX_SPLIT_PARTS || entries.some((e) => !/^(0|[1-9][0-9]?)$/.test(e.trim()) || Number(e) > MAX_DEVICE_ORDINAL);
  if (text.trim() === '' || bad) {
    return err(
      ErrorCode.InvalidArgument,
      `--devices must be 1 to ${MAX_SPLIT_PARTS} comma-separated CUDA device ordinals from 0 to ${MAX_DEVICE_ORDINAL} (0,1 or 0,0 for two parts on one device), got '${text}'`,
    );
  }
  return ok(Object.freeze(entries.map((e) => Number(e.trim()))));
}

/**
 * Parses the example's arguments (without `node` and the script; every standalone `--` is dropped) with
 * the hs command-line convention (`@hs/cli-options`). Numbers are in standard notation (`30`, `5e-2`,
 * `1e9`): `--devices` a list of device ordinals (`parseDevicesOption`), `--rate`, `--scans`, `--sweeps` and `--max-grid-bytes` (default 268435456, 256 MiB) whole
 * numbers within their ranges, `--voxel-size` a number above 0. `--input` and `--out` (default
 * `./out/scan-to-volume`) are resolved against the folder the command was typed in (`INIT_CWD`, else the
 * working directory) and given absolute.
 * @returns the request (`exit` with 0 after `--help`, 2 after a usage error commander printed to
 *   `output`), or InvalidArgument naming the option, the text given and what is accepted (an empty `--out`
 *   included).
 */
export function parseScanToVolumeArguments(args: readonly string[], output: PipelineOutput): Result<PipelineArguments<ScanToVolumeCliOptions>> {
  const program = createProgram('scan-to-volume', 'Streams a point cloud as scans into a growing NanoVDB volume, writes it as .nvdb and a depth-shaded PNG preview.', output)
    .option('--input <file>', 'point cloud: .ply, .xyz/.txt or .las (LAS 1.2-1.4, formats 0-3); default: the bundled Stanford bunny')
    .option('--voxel-size <units>', 'world units per voxel, a number above 0 (0.2, 5e-2)', '0.2')
    .option('--scans <n>', `scans per sweep, azimuth sectors (1 to ${MAX_SCANS})`, '36')
    .option('--sweeps <n>', `sweeps to stream (1 to ${MAX_SWEEPS})`, '1')
    .option('--rate <hz>', `nominal scan rate, whole scans per second (1 to ${MAX_SCAN_RATE_HZ})`, '30')
    .option('--max-grid-bytes <bytes>', 'refuse a volume grid larger than this, checked before any grid is built', String(DEFAULT_MAX_GRID_BYTES))
    .option('--out <dir>', 'output folder for volume.nvdb and preview.png (default: ./out/scan-to-volume)')
    .addOption(new Option('--codec <codec>', '.nvdb codec').choices(['zip', 'none']).default('zip'))
    .option('--devices <list>', 'split the build by space across these CUDA devices, e.g. 0,1 (0,0: two builders on one GPU); default: one device, cuda:0')
    .addOption(new Option('--backend <name>', 'host (pure TypeScript) or cuda; default: HS_BACKEND, then auto-detect').choices(['host', 'cuda']))
    .addOption(
      new Option('--builder <kind>', 'PointsToGrid builder: stream (bounded build over all points in stream order, GPU kernels on cuda) or host (incremental merge on the host)')
        .choices(['stream', 'host'])
        .default('stream'),
    );
  const exitCode = parseOptions(program, args);
  if (exitCode !== null) return ok({ kind: 'exit', exitCode });
  const raw = program.opts<Record<string, string | undefined>>();
  const integer = (flag: string, text: string, max: number): Result<number> => parseNumberOption(`--${flag}`, text, { min: 1, max, integer: true });
  const rate = integer('rate', String(raw['rate']), MAX_SCAN_RATE_HZ);
  if (!rate.ok) return rate;
  const scans = integer('scans', String(raw['scans']), MAX_SCANS);
  if (!scans.ok) return scans;
  const sweeps = integer('sweeps', String(raw['sweeps']), MAX_SWEEPS);
  if (!sweeps.ok) return sweeps;
  const maxGridBytes = integer('max-grid-bytes', String(raw['maxGridBytes']), Number.MAX_SAFE_INTEGER);
  if (!maxGridBytes.ok) return maxGridBytes;
  const voxelSize = parseNumberOption('--voxel-size', String(raw['voxelSize']), { above: 0 });
  if (!voxelSize.ok) return voxelSize;
  const devices = raw['devices'] === undefined ? ok(undefined) : parseDevicesOption(raw['devices']);
  if (!devices.ok) return devices;
  if (raw['out'] === '') return err(ErrorCode.InvalidArgument, "--out must name a folder, got ''; use --out . for the current folder");
  const outDir = raw['out'] === undefined ? defaultOutDir('scan-to-volume', process.env) : resolveUserPath(raw['out'], process.env);
  return ok({
    kind: 'build',
    options: {
      input: raw['input'] === undefined ? undefined : resolveUserPath(raw['input'], process.env),
      voxelSize: voxelSize.value,
      scans: scans.value,
      sweeps: sweeps.value,
      rateHz: rate.value,
      outDir,
      codec: raw['codec'] as NvdbCodec,
      backend: raw['backend'] as 'host' | 'cuda' | undefined,
      builder: raw['builder'] as GridBuilderKind,
      maxGridBytes: maxGridBytes.value,
      devices: devices.value,
    },
  });
}
