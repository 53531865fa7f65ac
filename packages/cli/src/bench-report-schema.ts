import { ErrorCode, err, ok, type Result } from '@hs/streams';

/**
 * The benchmark report schema `hs-bench-report/1`: what `tooling/benchmarks` writes when
 * `HS_BENCH_REPORT=<file>` is set and `hs bench` reads to draw its Markdown table and latency plot. This
 * module owns the schema; the benchmarks type what they write with these declarations.
 */

/** One benchmark series: every repeat's figure in nanoseconds per frame. */
export interface BenchSeries {
  /** Stable identifier of the series (`node-stream`, `pool-hop`). */
  readonly id: string;
  /** Human-readable name for tables and plots. */
  readonly label: string;
  /** Unit of `samples`: nanoseconds per frame. */
  readonly unit: 'ns/frame';
  /** True for the series the others are compared against (ratios are series median / baseline median). */
  readonly baseline: boolean;
  /** One figure per repeat, in `unit`: at least one, each finite and non-negative. */
  readonly samples: readonly number[];
}

/** A benchmark report (schema `hs-bench-report/1`), as JSON in the file `HS_BENCH_REPORT` names. */
export interface BenchReport {
  /** Schema identifier; always `hs-bench-report/1`. */
  readonly schema: 'hs-bench-report/1';
  /** Node version the benchmarks ran on (`process.version`). */
  readonly node: string;
  /** Frames per repeat; a positive integer. */
  readonly frames: number;
  /** Bytes per frame; a positive integer. */
  readonly frameBytes: number;
  /** Repeats of each series; a positive integer. */
  readonly repeats: number;
  /** At least one series; exactly one has `baseline: true`. */
  readonly series: readonly BenchSeries[];
}

/**
 * Parses and checks a benchmark report.
 *
 * @returns the report, or `ErrorCode.InvalidArgument` naming the first field that is missing or wrong
 *   (bad JSON, another schema, a series without samples, no baseline or several).
 */
export function parseBenchReport(text: string, source: string): Result<BenchReport> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (thrown) {
    return err(ErrorCode.InvalidArgument, `${source}: not JSON (${(thrown as Error).message})`);
  }
  const bad = (what: string): Result<never> => err(ErrorCode.InvalidArgument, `${source}: ${what}`);
  if (typeof value !== 'object' || value === null) return bad('not a benchmark report object');
  const report = value as Record<string, unknown>;
  if (report['schema'] !== 'hs-bench-report/1') return bad(`schema must be 'hs-bench-report/1', got ${JSON.stringify(report['schema'])}`);
  if (typeof report['node'] !== 'string') return bad('node must be a string');
  for (const field of ['frames', 'frameBytes', 'repeats'] as const) {
    const n = report[field];
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) return bad(`${field} must be a positive integer, got ${JSON.stringify(n)}`);
  }
  const series = report['series'];
  if (!Array.isArray(series) || series.length === 0) return bad('series must be a non-empty array');
  for (const [i, entry] of series.entries()) {
    if (typeof entry !== 'object' || entry === null) return bad(`series[${i}] is not an object`);
    const s = entry as Record<string, unknown>;
    if (typeof s['id'] !== 'string' || typeof s['label'] !== 'string') return bad(`series[${i}] needs string id and label`);
    if (s['unit'] !== 'ns/frame') return bad(`series[${i}].unit must be 'ns/frame', got ${JSON.stringify(s['unit'])}`);
    if (typeof s['baseline'] !== 'boolean') return bad(`series[${i}].baseline must be a boolean`);
    const samples = s['samples'];
    if (!Array.isArray(samples) || samples.length === 0 || !samples.every((x) => typeof x === 'number' && Number.isFinite(x) && x >= 0)) {
      return bad(`series[${i}] (${s['id']}) needs a non-empty array of finite non-negative samples`);
    }
  }
  const baselines = series.filter((s) => (s as BenchSeries).baseline).length;
  if (baselines !== 1) return bad(`exactly one series must be the baseline, found ${baselines}`);
  return ok(value as BenchReport);
}
