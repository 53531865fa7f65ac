import { Command, CommanderError, Option } from 'commander';
import { ErrorCode, err, ok, type Result } from '@hs/streams';
import { MAX_SECONDS } from './pipeline.js';

/** Command-line options after validation. */
export interface CliOptions {
  /** Seconds of data, 1 to `MAX_SECONDS`: 60 camera frames and 1000 IMU samples each. */
  readonly seconds: number;
  /** Directory of the recorder's `fusion.jsonl` (created if missing). */
  readonly outDir: string;
  /** Explicit backend, or `undefined` for `HS_BACKEND`, then auto-detection. */
  readonly backend: 'host' | 'cuda' | undefined;
}

/** Where the command line writes: one call per line, without the trailing newline. */
export interface CliOutput {
  readonly log: (line: string) => void;
  readonly error: (line: string) => void;
}

/** A run with these options, or stop now with `exitCode` (commander answered `--help` or a usage error). */
export type CliRequest = { readonly kind: 'run'; readonly options: CliOptions } | { readonly kind: 'exit'; readonly exitCode: number };

const PLAIN_INTEGER = /^[0-9]+$/;

/**
 * Parses and validates the user's arguments (without `node` and the script); a single leading `--` is
 * skipped. `--seconds` takes a plain decimal integer from 1 to `MAX_SECONDS`.
 * @returns the request, or `ErrorCode.InvalidArgument` naming the bad option, its value and the accepted range.
 */
export function parseCliArguments(args: readonly string[], output: CliOutput): Result<CliRequest> {
  const program = new Command('hs-sensor-fusion')
    .description('Fuses a 60 Hz camera with a 1 kHz IMU on the hs runtime, in real time, and records the results at 10 Hz.')
    .option('--seconds <n>', `seconds of data: 60 frames and 1000 IMU samples each (1 to ${MAX_SECONDS})`, '5')
    .option('--out <dir>', 'directory for fusion.jsonl (created if missing, the file replaced)', './out')
    .addOption(new Option('--backend <name>', 'host (pure TypeScript) or cuda; default: HS_BACKEND, then auto-detect').choices(['host', 'cuda']))
    .exitOverride()
    .configureOutput({
      writeOut: (text) => output.log(text.replace(/\n$/, '')),
      writeErr: (text) => output.error(text.replace(/\n$/, '')),
    });
  try {
    program.parse(args[0] === '--' ? args.slice(1) : args, { from: 'user' });
  } catch (thrown) {
    if (thrown instanceof CommanderError) return ok({ kind: 'exit', exitCode: thrown.exitCode });
    throw thrown;
  }
  const raw = program.opts<Record<string, string | undefined>>();
  const secondsText = String(raw['seconds']);
  const seconds = PLAIN_INTEGER.test(secondsText) ? Number(secondsText) : Number.NaN;
  if (!(seconds >= 1 && seconds <= MAX_SECONDS)) {
    return err(ErrorCode.InvalidArgument, `--seconds must be a plain decimal integer from 1 to ${MAX_SECONDS}, got '${secondsText}'`);
  }
  return ok({ kind: 'run', options: { seconds, outDir: String(raw['out']), backend: raw['backend'] as 'host' | 'cuda' | undefined } });
}
