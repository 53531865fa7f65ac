import { Option } from 'commander';
import { createProgram, defaultOutDir, parseNumberOption, parseOptions, resolveUserPath } from '@hs/cli-options';
import { ok, type Result } from '@hs/streams';
import { MAX_FRAME_FILES } from './frame-output-dir.js';
import { MAX_RATE_HZ, MIN_RATE_HZ } from './operators/image-source.js';

/** Command-line options after validation. */
export interface CliOptions {
  /** Image files, absolute, or `undefined` for the bundled mandrill. */
  readonly inputs: readonly string[] | undefined;
  /** Frames to emit, 1 to `MAX_FRAME_FILES`. */
  readonly frames: number;
  /** Source rate in Hz, `MIN_RATE_HZ` to `MAX_RATE_HZ`. */
  readonly rateHz: number;
  /** Output directory for the frame PNGs, absolute. */
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
 * has already answered (`--help`: 0, or a usage error such as an unknown option, printed to `output`: 2).
 */
export type CliRequest =
  | { readonly kind: 'run'; readonly options: CliOptions }
  | { readonly kind: 'exit'; readonly exitCode: number };

/**
 * Parses and validates the user's arguments (without the `node` and script entries) with the hs
 * command-line convention (`@hs/cli-options`): every standalone `--` (which some package managers pass
 * through) is dropped. `--frames` takes a whole number from 1 to `MAX_FRAME_FILES`, `--rate` a number from
 * `MIN_RATE_HZ` to `MAX_RATE_HZ`, both in standard notation (`30`, `2.5e1`). `--input` files and `--out`
 * (default `./out/image-pipeline`) are resolved against the folder the command was typed in (`INIT_CWD`,
 * else the working directory) and given absolute.
 *
 * @returns the request, or `ErrorCode.InvalidArgument` naming the bad option, its value and the accepted range.
 */
export function parseCliArguments(args: readonly string[], output: CliOutput): Result<CliRequest> {
  const program = createProgram(
    'image-pipeline',
    'Runs photos through grayscale and a 2x downscale on the hs runtime, then writes PNGs and prints pixel statistics.',
    output,
  )
    .option('--input <files...>', 'PNG or JPEG files, detected by content (default: the bundled 128x128 mandrill photo)')
    .option('--frames <n>', `frames the source emits, cycling through the inputs (1 to ${MAX_FRAME_FILES})`, '8')
    .option('--rate <hz>', `nominal source rate in frames per second (${MIN_RATE_HZ} to ${MAX_RATE_HZ})`, '30')
    .option('--out <dir>', 'directory for frame-00000.png, frame-00001.png, ... (old frame-NNNNN.png files there are removed; default: ./out/image-pipeline)')
    .addOption(
      new Option('--backend <name>', 'host (pure TypeScript) or cuda; default: HS_BACKEND, then auto-detect').choices(['host', 'cuda']),
    );
  const exitCode = parseOptions(program, args);
  if (exitCode !== null) return ok({ kind: 'exit', exitCode });
  const raw = program.opts<Record<string, string | string[] | undefined>>();

  const frames = parseNumberOption('--frames', String(raw['frames']), { min: 1, max: MAX_FRAME_FILES, integer: true });
  if (!frames.ok) return frames;
  const rateHz = parseNumberOption('--rate', String(raw['rate']), { min: MIN_RATE_HZ, max: MAX_RATE_HZ });
  if (!rateHz.ok) return rateHz;
  const out = raw['out'] as string | undefined;
  return ok({
    kind: 'run',
    options: {
      inputs: (raw['input'] as string[] | undefined)?.map((input) => resolveUserPath(input, process.env)),
      frames: frames.value,
      rateHz: rateHz.value,
      outDir: out === undefined ? defaultOutDir('image-pipeline', process.env) : resolveUserPath(out, process.env),
      backend: raw['backend'] as 'host' | 'cuda' | undefined,
    },
  });
}
