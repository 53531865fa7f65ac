import { join } from 'node:path';
import { Option } from 'commander';
import { type CliLines, createProgram, defaultOutDir, parseNumberOption, parseOptions, resolveUserPath } from '@hs/cli-options';
import { ok, type Result } from '@hs/streams';
import { DEFAULT_CLI_MAX_GRID_BYTES, type NvdbCodec } from '@hs/nanovdb-mr';

/** The command line of the example, validated. */
export interface CliOptions {
  /** PLY, XYZ, TXT or LAS point file, absolute; `undefined` for the bundled bunny. */
  readonly input: string | undefined;
  /** World units per voxel, a positive finite number. */
  readonly voxelSize: number;
  /** Where the `.nvdb` file goes: `points.nvdb` in the `--out` folder, absolute. */
  readonly output: string;
  readonly codec: NvdbCodec;
  /** The most bytes the grid may take (`--max-grid-bytes`), passed to `pointsToGrid` as `maxGridBytes`. */
  readonly maxGridBytes: number;
}

/** A build with these options, or stop now with `exitCode` (commander answered `--help`: 0, or a usage error: 2). */
export type CliRequest = { readonly kind: 'run'; readonly options: CliOptions } | { readonly kind: 'exit'; readonly exitCode: number };

/**
 * Parses the example's arguments (without `node` and the script) with the hs command-line convention
 * (`@hs/cli-options`; every standalone `--` is dropped): `--input`, `--voxel-size` (default 0.1, a number
 * above 0), `--out` (default `./out/points-to-grid`; the file is `points.nvdb` in it), `--codec` (zip, the
 * default, or none) and `--max-grid-bytes` (default 268435456, 256 MiB, as scan-to-volume's, a whole
 * number from 1 to 2^53 - 1). Numbers are in standard notation (`5e-2`, `1e9`); `--input` and `--out` are
 * resolved against the folder the command was typed in (`INIT_CWD`, else the working directory).
 * @returns the request, or InvalidArgument naming the flag, the text passed and what is accepted.
 */
export function parseCliArguments(args: readonly string[], output: CliLines): Result<CliRequest> {
  const program = createProgram('points-to-grid', 'Builds a point cloud into a NanoVDB OnIndex grid through a statistics-wrapped resource and writes it as .nvdb.', output)
    .option('--input <file>', 'point cloud: .ply, .xyz/.txt or .las; default: the bundled Stanford bunny')
    .option('--voxel-size <units>', 'world units per voxel, a number above 0 (0.1, 5e-2)', '0.1')
    .option('--out <dir>', 'output folder for points.nvdb (default: ./out/points-to-grid)')
    .addOption(new Option('--codec <codec>', '.nvdb codec').choices(['zip', 'none']).default('zip'))
    .option('--max-grid-bytes <bytes>', 'refuse a grid larger than this, checked before anything is allocated', String(DEFAULT_CLI_MAX_GRID_BYTES));
  const exitCode = parseOptions(program, args);
  if (exitCode !== null) return ok({ kind: 'exit', exitCode });
  const raw = program.opts<Record<string, string | undefined>>();
  const voxelSize = parseNumberOption('--voxel-size', String(raw['voxelSize']), { above: 0 });
  if (!voxelSize.ok) return voxelSize;
  const maxGridBytes = parseNumberOption('--max-grid-bytes', String(raw['maxGridBytes']), { min: 1, max: Number.MAX_SAFE_INTEGER, integer: true });
  if (!maxGridBytes.ok) return maxGridBytes;
  const outDir = raw['out'] === undefined ? defaultOutDir('points-to-grid', process.env) : resolveUserPath(raw['out'], process.env);
  return ok({
    kind: 'run',
    options: {
      input: raw['input'] === undefined ? undefined : resolveUserPath(raw['input'], process.env),
      voxelSize: voxelSize.value,
      output: join(outDir, 'points.nvdb'),
      codec: raw['codec'] as NvdbCodec,
      maxGridBytes: maxGridBytes.value,
    },
  });
}
