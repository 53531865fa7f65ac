import { Command, CommanderError, Option } from 'commander';
import { ErrorCode, err, ok, type Result } from '@hs/streams';
import { MAX_FRAME_FILES } from './frame-output-dir.js';
import { MAX_RATE_HZ, MIN_RATE_HZ } from './operators/image-source.js';

/** Command-line options after validation. */
export interface CliOptions {
  /** Image files, or `undefined` for the bundled mandrill. */
  readonly inputs: readonly string[] | undefined;
  /** Frames to emit, 1 to `MAX_FRAME_FILES`. */
  readonly frames: number;
  /** Source rate in Hz, `MIN_RATE_HZ` to `MAX_RATE_HZ`. */
  readonly rateHz: number;
  /** Output directory for the frame PNGs. */
  readonly outDir: string;
  /** Explicit backend, or `undefined` for `HS_BACKEND`, then auto-detection. */
  readonly backend: 'host' | 'cuda' | undefined;
}

/** Where the command line writes: one call per line, without the trailing newline. */
export interface CliOutput {
  readonly log: (line: string) => void;
  readonly error: (line: string) => void;
}

/**
 * What the arguments ask for: a run with these options, or to stop now with `exitCode` because commander
 * has already answered (`--help`, or a usage error such as an unknown option, printed to `output`).
 */
export type CliRequest =
  | { readonly kind: 'run'; readonly options: CliOptions }
  | { readonly kind: 'exit'; readonly exitCode: number };

const PLAIN_INTEGER = /^[0-9]+$/;
const PLAIN_DECIMAL = /^([0-9]+(\.[0-9]*)?|\.[0-9]+)$/;

/**
 * Parses and validates the user's arguments (without the `node` and script entries). A single leading
 * `--` (which some package managers pass through) is skipped. `--frames` takes a plain decimal integer
 * from 1 to `MAX_FRAME_FILES`; `--rate` a plain decimal number (digits with an optional fraction, no sign,
 * exponent, hex or spaces) from `MIN_RATE_HZ` to `MAX_RATE_HZ`.
 *
 * @returns the request, or `ErrorCode.InvalidArgument` naming the bad option, its value and the accepted range.
 */
export function parseCliArguments(args: readonly string[], output: CliOutput): Result<CliRequest> {
  const program = new Command('hs-image-pipeline')
    .description(
      'Runs photos through grayscale and a 2x downscale on the hs runtime, then writes PNGs and prints pixel statistics.',
    )
    .option('--input <files...>', 'PNG or JPEG files, detected by content (default: the bundled 128x128 mandrill photo)')
    .option('--frames <n>', `frames the source emits, cycling through the inputs (1 to ${MAX_FRAME_FILES})`, '8')
    .option('--rate <hz>', `nominal source rate in frames per second (${MIN_RATE_HZ} to ${MAX_RATE_HZ})`, '30')
    .option('--out <dir>', 'directory for frame-00000.png, frame-00001.png, ... (old frame-NNNNN.png files there are removed)', './out')
    .addOption(
      new Option('--backend <name>', 'host (pure TypeScript) or cuda; default: HS_BACKEND, then auto-detect').choices(['host', 'cuda']),
    )
    .exitOverride()
    .configureOutput({
      writeOut: (text) => output.log(text.replace(/\n$/, '')),
      writeErr: (text) => output.error(text.replace(/\n$/, '')),
    });
  const userArgs = args[0] === '--' ? args.slice(1) : args;
  try {
    program.parse(userArgs, { from: 'user' });
  } catch (thrown) {
    if (thrown instanceof CommanderError) return ok({ kind: 'exit', exitCode: thrown.exitCode });
    throw thrown;
  }
  const raw = program.opts<Record<string, string | string[] | undefined>>();

  const framesText = String(raw['frames']);
  const frames = PLAIN_INTEGER.test(framesText) ? Number(framesText) : Number.NaN;
  if (!(frames >= 1 && frames <= MAX_FRAME_FILES)) {
    return err(
      ErrorCode.InvalidArgument,
      `--frames must be a plain decimal integer from 1 to ${MAX_FRAME_FILES}, got '${framesText}'`,
    );
  }
  const rateText = String(raw['rate']);
  const rateHz = PLAIN_DECIMAL.test(rateText) ? Number(rateText) : Number.NaN;
  if (!(rateHz >= MIN_RATE_HZ && rateHz <= MAX_RATE_HZ)) {
    return err(
      ErrorCode.InvalidArgument,
      `--rate must be a plain decimal number of frames per second from ${MIN_RATE_HZ} to ${MAX_RATE_HZ}, got '${rateText}'`,
    );
  }
  return ok({
    kind: 'run',
    options: {
      inputs: raw['input'] as string[] | undefined,
      frames,
      rateHz,
      outDir: raw['out'] as string,
      backend: raw['backend'] as 'host' | 'cuda' | undefined,
    },
  });
}
