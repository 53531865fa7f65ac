/**
 * A fixed ring of the most recent latency samples (milliseconds), allocated once, with percentiles
 * computed on demand off the hot path.
 */
export class LatencyWindow {
  private readonly samples: Float64Array;
  private next = 0;
  private filled = 0;
  /** Samples recorded in total. */
  count = 0;
  /** Sum of all samples (ms). */
  totalMs = 0;
  /** Largest sample (ms). */
  maxMs = 0;

  constructor(capacity = 8192) {
    this.samples = new Float64Array(capacity);
  }

  /** Records one sample in milliseconds. Allocates nothing. */
  record(ms: number): void {
    this.samples[this.next] = ms;
    this.next = (this.next + 1) % this.samples.length;
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
