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
  private notice = '';

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
    this.bar.update(metrics.frames, { status: this.notice + status });
  }

  /** Puts `text` before the status from now on (e.g. `stopping (Ctrl-C)`), drawn at once. */
  note(text: string): void {
    this.notice = `${text} | `;
    this.bar.update({ status: this.notice + (this.previous === undefined ? '' : formatRunStatus(runStatus(this.previous, undefined))) });
    this.bar.render();
  }

  /** Draws the last state and leaves the cursor on a new line. */
  stop(): void {
    this.bar.stop();
  }
}
