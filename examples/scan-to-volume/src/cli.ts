import { compile } from '@hs/compiler';
import { RunSession, formatMetrics, pipelineSummary, type PipelineOutput } from '@hs/runtime';
import { CliExit, errorLines, usageHint } from '@hs/cli-options';
import { HsError, unwrap } from '@hs/streams';
import scanToVolumeModule from './pipeline-module.js';

/** Exit code of a run stopped by `signal` (Ctrl-C): 128 + SIGINT, as `hs run` uses. */
export const INTERRUPTED_EXIT_CODE = 130;

/** The program name that starts every error line. */
const PROGRAM = 'scan-to-volume';

/**
 * The example's own command line (`pnpm run main`, `node dist/main.js [options]`), the same steps `hs run
 * scan-to-volume` takes with this module: parse the options, build the graph, compile it, create the
 * session (the backend is settled there), then create the output folder, print the plan, run the session,
 * print its metrics and the summary. A start that fails (a bad option, input or backend) creates no
 * folder. Aborting `signal` (main.ts does on Ctrl-C) stops the run as `hs run` does: the sources end, the
 * graph drains (every file written is whole, no staging file is left), and the summary of the scans done
 * is printed. Every failure (a `.nvdb` file that does not read back included) is printed as
 * `scan-to-volume: <ErrorCode>: <message>` to `output.error`; a usage error adds the `hint:` line.
 * @returns the process exit code: 0 on success (and `--help`), `INTERRUPTED_EXIT_CODE` (130) when `signal`
 *   stopped the run, 2 for a usage error (an unknown option, a bad value), 1 when the work failed.
 */
export async function runCli(args: readonly string[], output: PipelineOutput, signal?: AbortSignal): Promise<number> {
  try {
    const exitCode = await run(args, output, signal);
    if (exitCode !== null) return exitCode;
    return signal?.aborted === true ? INTERRUPTED_EXIT_CODE : 0;
  } catch (thrown) {
    // Failures reject with HsError (programmer errors throw it); anything else is a bug worth its stack trace.
    if (!(thrown instanceof HsError)) throw thrown;
    for (const line of errorLines(PROGRAM, thrown.message)) output.error(line);
    return CliExit.Failure;
  }
}

/** Parses, builds, prepares and runs; the module's exit code when it answered itself, else null once the run ended. */
async function run(args: readonly string[], output: PipelineOutput, signal: AbortSignal | undefined): Promise<number | null> {
  const parsed = scanToVolumeModule.parseArguments(args, output);
  if (!parsed.ok) {
    for (const line of errorLines(PROGRAM, parsed.error.message, usageHint(PROGRAM))) output.error(line);
    return CliExit.Usage;
  }
  const request = parsed.value;
  if (request.kind === 'exit') return request.exitCode;
  const built = await scanToVolumeModule.build(request.options);
  const plan = unwrap(compile(built.graph, built.compileOptions));
  const session = unwrap(RunSession.create(plan, built.sessionOptions));
  try {
    // The output folder is made last, once everything that can fail at startup (the backend included)
    // has succeeded, so a failed start leaves no empty folder behind.
    await built.prepareRun?.();
    output.log(plan.toText());
    output.log(`backend: ${session.backend.name}`);
    const metrics = await session.run(signal === undefined ? {} : { signal });
    output.log(formatMetrics(metrics));
    for (const line of unwrap(pipelineSummary(built, metrics))) output.log(line);
  } finally {
    session.dispose();
  }
  return null;
}
