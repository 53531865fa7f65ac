import type { RunMetrics } from '@hs/runtime';
import cliProgress from 'cli-progress';
import type { ProgressStream } from './cli-io.js';
import { formatRunStatus, runStatus } from './run-status.js';

/**
 * The live display of `hs run` on a terminal: a progress bar over the expected frames (or a frame count
 * when the total is not known) followed by the status line (frames/s, the slowest operator's latency
 * p50/p99, pool occupancy), redrawn from each `'metrics'` snapshot.
 */
export class RunProgress {
  private readonly bar: cliProgress.SingleBar;
  private previous: RunMetrics | undefined;

  /**
   * @param expectedFrames frames a complete run emits (`PipelineBuild.expectedFrames`), or `undefined`.
   */
  constructor(stream: ProgressStream, expectedFrames: number | undefined) {
    const known = expectedFrames !== undefined && expectedFrames > 0;
    this.bar = new cliProgress.SingleBar(
      {
        // cli-progress only needs write/isTTY/columns of the stream.
        stream: stream as NodeJS.WritableStream,
        format: known ? '{bar} {percentage}% | {status}' : '{status}',
        hideCursor: true,
        clearOnComplete: false,
        stopOnComplete: false,
        barsize: 24,
        linewrap: false,
      },
      cliProgress.Presets.shades_classic,
    );
    this.bar.start(known ? expectedFrames : 0, 0, { status: 'starting' });
  }

  /** Redraws from a metrics snapshot. */
  update(metrics: RunMetrics): void {
    const status = formatRunStatus(runStatus(metrics, this.previous));
    this.previous = metrics;
    this.bar.update(metrics.frames, { status });
  }

  /** Shows `text` in place of the status until the next snapshot (e.g. `stopping (Ctrl-C)`). */
  note(text: string): void {
    this.bar.update({ status: text });
  }

  /** Draws the last state and leaves the cursor on a new line. */
  stop(): void {
    this.bar.stop();
  }
}
