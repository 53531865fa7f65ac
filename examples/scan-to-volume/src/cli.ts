import { compile } from '@hs/compiler';
import { RunSession, formatMetrics, pipelineSummary, type PipelineOutput } from '@hs/runtime';
import { HsError, OK_VOID, type Result } from '@hs/streams';
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
    const outcome = await run(args, output, signal);
    if (typeof outcome === 'number') return outcome;
    if (outcome.ok) return signal?.aborted === true ? INTERRUPTED_EXIT_CODE : 0;
    output.error(`error: ${outcome.error.message}`);
    return 1;
  } catch (thrown) {
    // Programmer errors throw HsError; anything else is a bug worth its stack trace.
    if (!(thrown instanceof HsError)) throw thrown;
    output.error(`error: ${thrown.message}`);
    return 1;
  }
}

async function run(args: readonly string[], output: PipelineOutput, signal: AbortSignal | undefined): Promise<number | Result<void>> {
  const request = scanToVolumeModule.parseArguments(args, output);
  if (!request.ok) return request;
  if (request.value.kind === 'exit') return request.value.exitCode;
  const built = await scanToVolumeModule.build(request.value.options);
  if (!built.ok) return built;
  const plan = compile(built.value.graph, built.value.compileOptions);
  if (!plan.ok) return plan;
  const session = RunSession.create(plan.value, built.value.sessionOptions);
  if (!session.ok) return session;
  try {
    // The output folder is made last, once everything that can fail at startup (the backend included)
    // has succeeded, so a failed start leaves no empty folder behind.
    const prepared = (await built.value.prepareRun?.()) ?? OK_VOID;
    if (!prepared.ok) return prepared;
    output.log(plan.value.toText());
    output.log(`backend: ${session.value.backend.name}`);
    const metrics = await session.value.run(signal === undefined ? {} : { signal });
    if (!metrics.ok) return metrics;
    output.log(formatMetrics(metrics.value));
    const summary = pipelineSummary(built.value, metrics.value);
    if (!summary.ok) return summary;
    for (const line of summary.value) output.log(line);
  } finally {
    session.value.dispose();
  }
  return OK_VOID;
}
