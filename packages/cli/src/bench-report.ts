import { ErrorCode, err, ok, type Result } from '@hs/streams';

/** One benchmark series: every repeat's figure in nanoseconds per frame. */
export interface BenchSeries {
  readonly id: string;
  readonly label: string;
  readonly unit: 'ns/frame';
  /** True for the series the others are compared against. */
  readonly baseline: boolean;
  /** At least one finite, non-negative figure. */
  readonly samples: readonly number[];
}

/** The report the benchmarks write for `HS_BENCH_REPORT` (schema `hs-bench-report/1`). */
export interface BenchReport {
  readonly schema: 'hs-bench-report/1';
  /** Node version the benchmarks ran on. */
  readonly node: string;
  /** Frames per repeat. */
  readonly frames: number;
  /** Bytes per frame. */
  readonly frameBytes: number;
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

/** Figures of one series for the table. */
export interface SeriesSummary {
  readonly series: BenchSeries;
  readonly median: number;
  readonly min: number;
  readonly max: number;
  /** Median over the baseline's median. */
  readonly ratio: number;
}

/** Median, min, max and ratio to the baseline's median, per series, in report order. */
export function summarizeBenchReport(report: BenchReport): SeriesSummary[] {
  const baseline = report.series.find((s) => s.baseline) as BenchSeries;
  const baselineMedian = median(baseline.samples);
  return report.series.map((series) => {
    const m = median(series.samples);
    return { series, median: m, min: Math.min(...series.samples), max: Math.max(...series.samples), ratio: baselineMedian > 0 ? m / baselineMedian : Number.NaN };
  });
}

/**
 * The report as a Markdown document: a heading with the run's parameters and one table row per series
 * (median, min, max in ns/frame, repeats, median ratio to the baseline).
 */
export function renderBenchMarkdown(report: BenchReport): string {
  const rows = summarizeBenchReport(report).map(
    (s) =>
      `| ${s.series.label}${s.series.baseline ? ' (baseline)' : ''} | ${s.median.toFixed(0)} | ${s.min.toFixed(0)} | ${s.max.toFixed(0)} | ${s.series.samples.length} | ${Number.isNaN(s.ratio) ? '-' : `${s.ratio.toFixed(2)}x`} |`,
  );
  return [
    '# hs bench',
    '',
    `${report.frames} frames of ${report.frameBytes} bytes per repeat, ${report.repeats} repeats, host backend, Node ${report.node}.`,
    'Ratios are medians over the baseline median measured in the same run.',
    '',
    '| series | median ns/frame | min ns/frame | max ns/frame | repeats | vs baseline |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
    '',
  ].join('\n');
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}
