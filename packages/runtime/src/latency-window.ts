/** Samples an operator's latency percentiles are computed over: its most recent activations. */
export const LATENCY_WINDOW_SAMPLES = 1024;

const NO_SAMPLES = new Float64Array(0);

/**
 * A fixed ring of the most recent latency samples (milliseconds; `LATENCY_WINDOW_SAMPLES` by default,
 * 8 KiB per operator), allocated once by `reserve()` when a run starts (so creating a large session
 * allocates none), with percentiles computed on demand off the hot path.
 */
export class LatencyWindow {
  private samples: Float64Array = NO_SAMPLES;
  private next = 0;
  private filled = 0;
  /** Samples recorded in total. */
  count = 0;
  /** Sum of all samples (ms). */
  totalMs = 0;
  /** Largest sample (ms). */
  maxMs = 0;

  constructor(private readonly capacity = LATENCY_WINDOW_SAMPLES) {}

  /** Allocates the ring (once; later calls do nothing). Call before the first `record()`. */
  reserve(): void {
    if (this.samples.length === 0) this.samples = new Float64Array(this.capacity);
  }

  /** Records one sample in milliseconds (after `reserve()`). Allocates nothing. */
  record(ms: number): void {
    this.samples[this.next] = ms;
    this.next = this.next + 1 === this.samples.length ? 0 : this.next + 1;
    if (this.filled < this.samples.length) this.filled += 1;
    this.count += 1;
    this.totalMs += ms;
    if (ms > this.maxMs) this.maxMs = ms;
  }

  /** The p-th percentile (0..100) of the retained window in ms; 0 when empty. */
  percentile(p: number): number {
    if (this.filled === 0) return 0;
    const sorted = this.samples.slice(0, this.filled).sort();
    const rank = Math.min(this.filled - 1, Math.max(0, Math.ceil((p / 100) * this.filled) - 1));
    return sorted[rank]!;
  }
}
