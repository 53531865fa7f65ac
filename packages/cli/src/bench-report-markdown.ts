import type { BenchReport, BenchSeries } from './bench-report-schema.js';

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
