import { RunSession, formatMetrics } from '@hs/runtime';
import { type Backend, HsError, errWithContext, selectBackend, unwrap, type Result } from '@hs/streams';
import { CliExit, errorLines, usageHint } from '@hs/cli-options';
import { parseCliArguments, type CliOptions, type CliOutput } from './cli-options.js';
import { prepareOutputDir } from './frame-output-dir.js';
import { loadImageInputs } from './image-input.js';
import { DEFAULT_IMAGE_BOUNDS, buildImagePipeline } from './pipeline.js';
import { runSummaryLines } from './run-summary.js';

/**
 * Runs the example's command line: parses `args` (the user's arguments, without `node` and the script),
 * then checks everything that can be checked before printing anything (options, input images, the
 * compiled plan, the backend, the output directory, in that order), then prints the inputs and the plan,
 * runs, and prints metrics, statistics and the files written. Every failure is printed as
 * `image-pipeline: <ErrorCode>: <message>` to `output.error`; a usage error adds the `hint:` line.
 *
 * The output directory is locked for the run (`prepareOutputDir`, `lockOutputDir`) before any old frame
 * is deleted and released when the run has ended, whether it succeeded, failed or was stopped; a directory
 * another run holds fails with `AlreadyExists` and is left untouched.
 *
 * @param env environment to read `HS_BACKEND` from; default `process.env`.
 * @param signal aborting it stops the run as `RunSession.run`'s signal does (the source ends, the graph
 *   drains, every slot returns); the metrics and the files written so far are still printed.
 * @returns the process exit code: 0 on success (a stopped run included) and `--help`, 2 for a usage
 *   error (an unknown option, a bad value), 1 when the work failed.
 */
export async function runCli(
  args: readonly string[],
  output: CliOutput,
  env: Readonly<Record<string, string | undefined>> = process.env,
  signal?: AbortSignal,
): Promise<number> {
  try {
    const request = parseCliArguments(args, output);
    if (!request.ok) {
      for (const line of errorLines(PROGRAM, request.error.message, usageHint(PROGRAM))) output.error(line);
      return CliExit.Usage;
    }
    if (request.value.kind === 'exit') return request.value.exitCode;
    await runPipeline(request.value.options, output, env, signal);
    return 0;
  } catch (thrown) {
    // Failures reject with HsError (programmer errors throw it); anything else is a bug worth its stack trace.
    if (!(thrown instanceof HsError)) throw thrown;
    return reportFailure(thrown, output);
  }
}

/** Loads, builds, prepares and runs; rejects with the first failure's `HsError`. */
async function runPipeline(
  options: CliOptions,
  output: CliOutput,
  env: Readonly<Record<string, string | undefined>>,
  signal: AbortSignal | undefined,
): Promise<void> {
  const { frames, rateHz, outDir } = options;
  const images = await loadImageInputs(options.inputs, DEFAULT_IMAGE_BOUNDS);
  const pipeline = unwrap(buildImagePipeline({ images, frames, rateHz, outDir }));
  const backend = unwrap(chooseBackend(options.backend, env));
  try {
    const prepared = await prepareOutputDir(outDir).catch((thrown: HsError) => {
      throw errWithContext(thrown, '--out').error;
    });
    try {
      for (const image of images) output.log(`input ${image.name}: ${image.width}x${image.height} RGBA`);
      output.log(pipeline.plan.toText());
      const session = unwrap(RunSession.create(pipeline.plan, { backend }));
      try {
        output.log(`backend: ${backend.name}`);
        output.log(formatMetrics(await session.run(signal === undefined ? {} : { signal })));
      } finally {
        session.dispose();
      }
    } finally {
      prepared.lock.release();
    }
  } finally {
    backend.dispose();
  }

  for (const line of runSummaryLines(pipeline, outDir)) output.log(line);
}

/** `selectBackend`, with its error saying which setting chose the backend in command-line terms. */
function chooseBackend(explicit: 'host' | 'cuda' | undefined, env: Readonly<Record<string, string | undefined>>): Result<Backend> {
  const selected = selectBackend({ backend: explicit, env });
  if (selected.ok) return selected;
  const fromEnv = env['HS_BACKEND'];
  const source =
    explicit !== undefined
      ? `--backend ${explicit}`
      : fromEnv !== undefined && fromEnv !== ''
        ? `HS_BACKEND=${fromEnv}`
        : 'auto-detected backend';
  return errWithContext(selected.error, source);
}

/** The program name that starts every error line. */
const PROGRAM = 'image-pipeline';

function reportFailure(error: HsError, output: CliOutput): number {
  // A CompileError's message already lists its diagnostics.
  for (const line of errorLines(PROGRAM, error.message)) output.error(line);
  return CliExit.Failure;
}
