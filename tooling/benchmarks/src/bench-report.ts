import { writeFile } from 'node:fs/promises';

/** One measured series: every repeat's figure, in `unit`. */
export interface BenchSeries {
  readonly id: string;
  readonly label: string;
  readonly unit: 'ns/frame';
  /** True for the series the others are compared against (ratios are series / baseline). */
  readonly baseline: boolean;
  readonly samples: readonly number[];
}

/**
 * The machine-readable report `HS_BENCH_REPORT=<file>` asks for (schema `hs-bench-report/1`), read by
 * `hs bench` to write its Markdown table and latency plot.
 */
export interface BenchReport {
  readonly schema: 'hs-bench-report/1';
  readonly node: string;
  /** Frames per repeat. */
  readonly frames: number;
  /** Bytes per frame. */
  readonly frameBytes: number;
  readonly repeats: number;
  readonly series: readonly BenchSeries[];
}

/** Writes `report` as JSON to `path`. */
export async function writeBenchReport(path: string, report: BenchReport): Promise<void> {
  await writeFile(path, `${JSON.stringify(report, null, 2)}\n`);
}
