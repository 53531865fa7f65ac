import { writeFile } from 'node:fs/promises';
import type { BenchReport } from '@hs/cli';

/**
 * Writes `report` as JSON to `path`: the machine-readable report `HS_BENCH_REPORT=<file>` asks for, in the
 * schema `hs-bench-report/1` that @hs/cli owns and `hs bench` reads to write its Markdown table and
 * latency plot.
 */
export async function writeBenchReport(path: string, report: BenchReport): Promise<void> {
  await writeFile(path, `${JSON.stringify(report, null, 2)}\n`);
}
