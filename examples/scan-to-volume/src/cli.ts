import { compile } from '@hs/compiler';
import { RunSession, formatMetrics, pipelineSummary, type PipelineOutput } from '@hs/runtime';
import { HsError, unwrap } from '@hs/streams';
import scanToVolumeModule from './pipeline-module.js';

/** Exit code of a run stopped by `signal` (Ctrl-C): 128 + SIGINT, as `hs run` uses. */
export const INTERRUPTED_EXIT_CODE = 130;

/**
 * The example's own command line (`pnpm run main`, `node dist/main.js [options]`), the same steps `hs run
 * scan-to-volume` takes with this module: parse the options, build the graph, compile it, create the
 * session (the backend is settled there), then create the output folder, print the plan, run the session,
 * print its metrics and the summary. A start that fails (a bad option, input or backend) creates no
 * folder. Aborting `signal` (main.ts does on Ctrl-C) stops the run as `hs run` does: the sources end, the
 * graph drains (every file written is whole, no staging file is left), and the summary of the scans done
 * is printed. Every failure (a `.nvdb` file that does not read back included) is printed as one line,
 * `error: <ErrorCode>: <message>`, to `output.error`.
 * @returns the process exit code: 0 on success, `INTERRUPTED_EXIT_CODE` (130) when `signal` stopped the
 *   run, 1 on any error (commander's own code for `--help` and usage errors).
 */
export async function runCli(args: readonly string[], output: PipelineOutput, signal?: AbortSignal): Promise<number> {
  try {
    const exitCode = await run(args, output, signal);
    if (exitCode !== null) return exitCode;
    return signal?.aborted === true ? INTERRUPTED_EXIT_CODE : 0;
  } catch (thrown) {
    // Failures reject with HsError (programmer errors throw it); anything else is a bug worth its stack trace.
    if (!(thrown instanceof HsError)) throw thrown;
    output.error(`error: ${thrown.message}`);
    return 1;
  }
}

/** Parses, builds, prepares and runs; the module's exit code when it answered itself, else null once the run ended. */
async function run(args: readonly string[], output: PipelineOutput, signal: AbortSignal | undefined): Promise<number | null> {
  const request = unwrap(scanToVolumeModule.parseArguments(args, output));
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
