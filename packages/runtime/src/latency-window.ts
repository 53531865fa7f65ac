import { latencyNowMs } from './latency-clock.js';

/** Samples an operator's latency percentiles are computed over: its most recent activations. */
export const LATENCY_WINDOW_SAMPLES = 1024;

const NO_SAMPLES = new Float64Array(0);

/**
 * A fixed ring of the most recent latency samples (milliseconds; `LATENCY_WINDOW_SAMPLES` by default,
 * 8 KiB per operator), allocated once by `reserve()` when a run starts (so creating a large session
 * allocates none), with percentiles computed on demand off the hot path. `begin()`/`end()` time one
 * activation in `interval` (1: every one); the others read no clock.
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

  /** Activations left until the next sample. */
  #untilSample = 1;
  /** True while the current activation is a sample. */
  #sampling = false;
  #startedMs = 0;

  constructor(
    private readonly capacity = LATENCY_WINDOW_SAMPLES,
    /** Activations per sample (a positive whole number; 1: every activation). */
    readonly interval = 1,
  ) {}

  /**
   * An activation starts. `startedMs` is when (`latencyNowMs()`, the end of the activation before it),
   * or `NaN` when the caller read no clock: a sampled activation then reads its own start.
   */
  begin(startedMs: number): void {
    if (this.interval === 1) {
      this.#sampling = true;
      this.#startedMs = startedMs;
    } else if (--this.#untilSample <= 0) {
      this.#untilSample = this.interval;
      this.#sampling = true;
      this.#startedMs = Number.isNaN(startedMs) ? latencyNowMs() : startedMs;
    } else {
      this.#sampling = false;
    }
  }

  /** The activation `begin()` started ended: records it when it is a sample. @returns the end time read, or `NaN` (none read). */
  end(): number {
    if (!this.#sampling) return Number.NaN;
    const endedMs = latencyNowMs();
    this.record(endedMs - this.#startedMs);
    return endedMs;
  }

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
