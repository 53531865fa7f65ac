import { Option } from 'commander';
import { createProgram, defaultOutDir, parseNumberOption, parseOptions, resolveUserPath } from '@hs/cli-options';
import { ok, type Result } from '@hs/streams';
import { MAX_SECONDS } from './pipeline.js';

/** Command-line options after validation. */
export interface CliOptions {
  /** Seconds of data, 1 to `MAX_SECONDS`: 60 camera frames and 1000 IMU samples each. */
  readonly seconds: number;
  /** Directory of the recorder's `fusion.jsonl`, absolute (created if missing). */
  readonly outDir: string;
  /** Explicit backend, or `undefined` for `HS_BACKEND`, then auto-detection. */
  readonly backend: 'host' | 'cuda' | undefined;
}

/** Where the command line writes: one call per line, without the trailing newline. */
export interface CliOutput {
  readonly log: (line: string) => void;
  readonly error: (line: string) => void;
}

/** A run with these options, or stop now with `exitCode` (commander answered `--help`: 0, or a usage error: 2). */
export type CliRequest = { readonly kind: 'run'; readonly options: CliOptions } | { readonly kind: 'exit'; readonly exitCode: number };

/**
 * Parses and validates the user's arguments (without `node` and the script) with the hs command-line
 * convention (`@hs/cli-options`): every standalone `--` is dropped; `--seconds` takes a whole number from 1
 * to `MAX_SECONDS` in standard notation; `--out` (default `./out/sensor-fusion`) is resolved against the
 * folder the command was typed in (`INIT_CWD`, else the working directory) and given absolute.
 * @returns the request, or `ErrorCode.InvalidArgument` naming the bad option, its value and the accepted range.
 */
export function parseCliArguments(args: readonly string[], output: CliOutput): Result<CliRequest> {
  const program = createProgram('sensor-fusion', 'Fuses a 60 Hz camera with a 1 kHz IMU on the hs runtime, in real time, and records the results at 10 Hz.', output)
    .option('--seconds <n>', `seconds of data: 60 frames and 1000 IMU samples each (1 to ${MAX_SECONDS})`, '5')
    .option('--out <dir>', 'directory for fusion.jsonl (created if missing, the file replaced; default: ./out/sensor-fusion)')
    .addOption(new Option('--backend <name>', 'host (pure TypeScript) or cuda; default: HS_BACKEND, then auto-detect').choices(['host', 'cuda']));
  const exitCode = parseOptions(program, args);
  if (exitCode !== null) return ok({ kind: 'exit', exitCode });
  const raw = program.opts<Record<string, string | undefined>>();
  const seconds = parseNumberOption('--seconds', String(raw['seconds']), { min: 1, max: MAX_SECONDS, integer: true });
  if (!seconds.ok) return seconds;
  const outDir = raw['out'] === undefined ? defaultOutDir('sensor-fusion', process.env) : resolveUserPath(raw['out'], process.env);
  return ok({ kind: 'run', options: { seconds: seconds.value, outDir, backend: raw['backend'] as 'host' | 'cuda' | undefined } });
}
