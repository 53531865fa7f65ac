import type { BenchReport } from '@hs/cli';
import { writeFileAtomic } from '@hs/streams';

/**
 * Writes `report` as JSON to `path`: the machine-readable report `HS_BENCH_REPORT=<file>` asks for, in the
 * schema `hs-bench-report/1` that @hs/cli owns and `hs bench` reads to write its Markdown table and
 * latency plot. Written with `writeFileAtomic` of @hs/streams (a staging file renamed onto `path`): a
 * symlink planted at `path` in a shared `--out` is replaced, never written through.
 * @throws HsError (the promise rejects) `writeFileAtomic`'s error.
 */
export async function writeBenchReport(path: string, report: BenchReport): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(report, null, 2)}\n`);
}
