import { parseArgs } from 'node:util';
import { ErrorCode, err, ok, type Result } from '@hs/streams';
import type { NvdbCodec } from '@hs/nanovdb-mr';

/** The command line of the example, validated. */
export interface CliOptions {
  /** PLY, XYZ, TXT or LAS point file; `undefined` for the bundled bunny. */
  readonly input: string | undefined;
  /** World units per voxel, a positive finite number. */
  readonly voxelSize: number;
  /** Where the `.nvdb` file goes. */
  readonly output: string;
  readonly codec: NvdbCodec;
}

/** A plain positive decimal number as typed on a command line (`0.1`, `2`, `.5`): no hex, exponent or sign. */
const POSITIVE_DECIMAL = /^(\d+\.?\d*|\.\d+)$/;

/**
 * Parses `--input`, `--voxel-size` (default 0.1), `--output` (default out/points.nvdb) and `--codec`
 * (zip, the default, or none). Errors: InvalidArgument naming the flag and the text passed, for an
 * unknown flag, a voxel size that is not a plain positive decimal number, or an unknown codec.
 */
export function parseCliOptions(args: readonly string[]): Result<CliOptions> {
  let values: { input?: string; 'voxel-size': string; output: string; codec: string };
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: {
        input: { type: 'string' },
        'voxel-size': { type: 'string', default: '0.1' },
        output: { type: 'string', default: 'out/points.nvdb' },
        codec: { type: 'string', default: 'zip' },
      },
    }) as { values: typeof values });
  } catch (cause) {
    return err(ErrorCode.InvalidArgument, `${cause instanceof Error ? cause.message : String(cause)}; options are --input, --voxel-size, --output, --codec`, cause);
  }
  const text = values['voxel-size'];
  const voxelSize = Number(text);
  if (!POSITIVE_DECIMAL.test(text) || !(voxelSize > 0) || !Number.isFinite(voxelSize)) {
    return err(ErrorCode.InvalidArgument, `--voxel-size: expected a positive decimal number such as 0.1, got "${text}"`);
  }
  if (values.codec !== 'zip' && values.codec !== 'none') {
    return err(ErrorCode.InvalidArgument, `--codec: expected zip or none, got "${values.codec}"`);
  }
  return ok({ input: values.input, voxelSize, output: values.output, codec: values.codec });
}
