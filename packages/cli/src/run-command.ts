import { RunSession, formatMetrics, pipelineSummary, type RunMetrics } from '@hs/runtime';
import { HsError } from '@hs/streams';
import type { CliIo } from './cli-io.js';
import { ExitCode, type ExitCodeValue } from './exit-codes.js';
import { preparePipeline } from './pipeline-preparation.js';
import { RunProgress } from './run-progress.js';

/** Options of `hs run`. */
export interface RunCommandOptions {
  /** Example name or path of a pipeline module. */
  readonly target: string;
  /** Arguments for the module (after `--`). */
  readonly moduleArgs: readonly string[];
  /** Milliseconds between metrics snapshots (status line redraws); a positive number. */
  readonly intervalMs: number;
  /** `false` turns the progress bar and status line off even on a terminal. */
  readonly progress: boolean;
  /** Milliseconds the session gets to drain after Ctrl-C (and then to return its slots). */
  readonly drainTimeoutMs: number;
}

/**
 * `hs run`: prepares the pipeline (load, parse, build, compile), creates a `RunSession`, calls the
 * pipeline's `prepareRun()` and runs the session. On a terminal (`io.progress` set and `progress` true) a progress bar and a
 * status line are redrawn from each `'metrics'` snapshot; otherwise nothing is printed while it runs.
 * Ctrl-C stops the session (`stop()` semantics: sources end, the graph drains within `drainTimeoutMs`,
 * every slot returns). The backend is printed first; at the end `formatMetrics()` and the module's summary lines (also after Ctrl-C);
 * a summary that returns an error (see `pipelineSummary`) is printed as `hs: <message>` and fails the run.
 *
 * @returns `ExitCode.Success`; `ExitCode.Interrupted` after Ctrl-C; `ExitCode.Failure` when the run or
 *   its preparation fails; `ExitCode.Usage` for a module or arguments that were wrong.
 */
export async function runCommand(options: RunCommandOptions, io: CliIo): Promise<ExitCodeValue> {
  const prepared = await preparePipeline('hs run', options.target, options.moduleArgs, io);
  if (!prepared.ok) return prepared.exitCode;
  const { loaded, build, plan } = prepared.value;
  // The session (its backend and pools) first: a run that cannot start leaves nothing prepareRun() would
  // make, such as an empty output folder.
  const created = RunSession.create(plan, { ...build.sessionOptions, metricsIntervalMs: options.intervalMs });
  if (!created.ok) {
    io.err(`hs: ${created.error.message}`);
    return ExitCode.Failure;
  }
  const session = created.value;
  if (build.prepareRun !== undefined) {
    try {
      await build.prepareRun();
    } catch (thrown) {
      session.dispose();
      io.err(`hs: ${errorMessage(thrown)}`);
      return ExitCode.Failure;
    }
  }
  const controller = new AbortController();
  let interrupted = false;
  let display: RunProgress | undefined;
  let removeInterrupt = (): void => undefined;
  let metrics: RunMetrics;
  try {
    io.out(`hs run ${loaded.module.name}: ${loaded.module.description}`);
    io.out(`backend: ${session.backend.name}`);
    const live = options.progress && io.progress !== null ? new RunProgress(io.progress, build.expectedFrames) : undefined;
    display = live;
    if (live !== undefined) session.on('metrics', (metrics: RunMetrics) => live.update(metrics));
    removeInterrupt = io.onInterrupt(() => {
      interrupted = true;
      live?.note('stopping (Ctrl-C): draining the graph');
      controller.abort();
    });
    metrics = await session.run({ signal: controller.signal, drainTimeoutMs: options.drainTimeoutMs });
  } catch (thrown) {
    io.err(`hs: ${errorMessage(thrown)}`);
    return ExitCode.Failure;
  } finally {
    display?.stop();
    removeInterrupt();
    session.dispose();
  }
  io.out(formatMetrics(metrics));
  const summary = pipelineSummary(build, metrics);
  if (!summary.ok) {
    io.err(`hs: ${summary.error.message}`);
    return ExitCode.Failure;
  }
  for (const line of summary.value) io.out(line);
  if (!interrupted) return ExitCode.Success;
  io.err(`interrupted: stopped after ${metrics.frames} frames, every slot returned`);
  return ExitCode.Interrupted;
}

/** An `HsError`'s message (`<code>: <message>`); a rejection with anything else (a module's bug) as `InvalidState: <message>`. */
function errorMessage(thrown: unknown): string {
  if (thrown instanceof HsError) return thrown.message;
  return `InvalidState: ${thrown instanceof Error ? thrown.message : String(thrown)}`;
}
