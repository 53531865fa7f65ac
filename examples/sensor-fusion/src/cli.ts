import { renderRateQueueInspection } from '@hs/compiler';
import { RunSession, createOutputDirectory, formatMetrics } from '@hs/runtime';
import { HsError, selectBackend, unwrap } from '@hs/streams';
import { CliExit, errorLines, usageHint } from '@hs/cli-options';
import { loadBundledPhoto } from './bundled-photo.js';
import { type CliOptions, type CliOutput, parseCliArguments } from './cli-options.js';
import { EDGES, buildSensorFusionPipeline } from './pipeline.js';
import { runSummaryLines } from './run-summary.js';

/**
 * Runs the example's command line: parses `args`, builds and compiles the pipeline, selects the backend
 * (`--backend`, then `HS_BACKEND`, then auto-detection) and creates `--out`, then prints the plan, runs in
 * real time, and prints the IMU edge's queue-sizing explanation, the run metrics and the summary. Every
 * failure is printed as `sensor-fusion: <ErrorCode>: <message>` to `output.error`; a usage error adds the
 * `hint:` line.
 * @param signal aborting it stops the run (the sources end, the graph drains); the metrics are still printed.
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
    if (!(thrown instanceof HsError)) throw thrown;
    for (const line of errorLines(PROGRAM, thrown.message)) output.error(line);
    return CliExit.Failure;
  }
}

/** The program name that starts every error line. */
const PROGRAM = 'sensor-fusion';

async function runPipeline(options: CliOptions, output: CliOutput, env: Readonly<Record<string, string | undefined>>, signal: AbortSignal | undefined): Promise<void> {
  const pipeline = unwrap(buildSensorFusionPipeline({ photo: loadBundledPhoto(), seconds: options.seconds, outDir: options.outDir }));
  const backend = unwrap(selectBackend({ backend: options.backend, env }));
  try {
    await createOutputDirectory(options.outDir, '--out');
    output.log(pipeline.plan.toText());
    const session = unwrap(RunSession.create(pipeline.plan, { backend }));
    try {
      output.log(`backend: ${backend.name}; running ${options.seconds} s in real time`);
      const metrics = await session.run(signal === undefined ? {} : { signal });
      const snapshot = session.captureRateGenerations();
      if (snapshot.published !== null) output.log(unwrap(renderRateQueueInspection(pipeline.plan, snapshot, snapshot.published.rateGeneration, EDGES.imu, 'text')));
      output.log(formatMetrics(metrics));
      for (const line of runSummaryLines(pipeline, metrics)) output.log(line);
    } finally {
      session.dispose();
    }
  } finally {
    backend.dispose();
  }
}
