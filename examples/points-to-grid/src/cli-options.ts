import { parseArgs } from 'node:util';
import { ErrorCode, err, ok, type Result } from '@hs/streams';
import { DEFAULT_CLI_MAX_GRID_BYTES, type NvdbCodec } from '@hs/nanovdb-mr';

/** The command line of the example, validated. */
export interface CliOptions {
  /** PLY, XYZ, TXT or LAS point file; `undefined` for the bundled bunny. */
  readonly input: string | undefined;
  /** World units per voxel, a positive finite number. */
  readonly voxelSize: number;
  /** Where the `.nvdb` file goes. */
  readonly output: string;
  readonly codec: NvdbCodec;
  /** The most bytes the grid may take (`--max-grid-bytes`), passed to `pointsToGrid` as `maxGridBytes`. */
  readonly maxGridBytes: number;
}

/** A plain positive decimal number as typed on a command line (`0.1`, `2`, `.5`): no hex, exponent or sign. */
const POSITIVE_DECIMAL = /^(\d+\.?\d*|\.\d+)$/;

/** A plain decimal integer as typed on a command line: digits only. */
const DECIMAL_INTEGER = /^\d+$/;

/**
 * Parses `--input`, `--voxel-size` (default 0.1), `--output` (default out/points.nvdb), `--codec`
 * (zip, the default, or none) and `--max-grid-bytes` (default 268435456, 256 MiB, as scan-to-volume's).
 * Errors: InvalidArgument naming the flag and the text passed, for an unknown flag, a voxel size that is
 * not a plain positive decimal number, an unknown codec, or a `--max-grid-bytes` that is not a decimal
 * integer from 1 to 2^53 - 1.
 */
export function parseCliOptions(args: readonly string[]): Result<CliOptions> {
  let values: { input?: string; 'voxel-size': string; output: string; codec: string; 'max-grid-bytes': string };
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: {
        input: { type: 'string' },
        'voxel-size': { type: 'string', default: '0.1' },
        output: { type: 'string', default: 'out/points.nvdb' },
        codec: { type: 'string', default: 'zip' },
        'max-grid-bytes': { type: 'string', default: String(DEFAULT_CLI_MAX_GRID_BYTES) },
      },
    }) as { values: typeof values });
  } catch (cause) {
    return err(ErrorCode.InvalidArgument, `${cause instanceof Error ? cause.message : String(cause)}; options are --input, --voxel-size, --output, --codec, --max-grid-bytes`, cause);
  }
  const text = values['voxel-size'];
  const voxelSize = Number(text);
  if (!POSITIVE_DECIMAL.test(text) || !(voxelSize > 0) || !Number.isFinite(voxelSize)) {
    return err(ErrorCode.InvalidArgument, `--voxel-size: expected a positive decimal number such as 0.1, got "${text}"`);
  }
  if (values.codec !== 'zip' && values.codec !== 'none') {
    return err(ErrorCode.InvalidArgument, `--codec: expected zip or none, got "${values.codec}"`);
  }
  const capText = values['max-grid-bytes'];
  const maxGridBytes = Number(capText);
  if (!DECIMAL_INTEGER.test(capText) || !Number.isSafeInteger(maxGridBytes) || maxGridBytes < 1) {
    return err(ErrorCode.InvalidArgument, `--max-grid-bytes: expected a decimal integer from 1 to 2^53 - 1 (bytes), got "${capText}"`);
  }
  return ok({ input: values.input, voxelSize, output: values.output, codec: values.codec, maxGridBytes });
}
