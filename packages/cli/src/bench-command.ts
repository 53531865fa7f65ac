import { spawn } from 'node:child_process';
import { delimiter, dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { createOutputDirectory } from '@hs/runtime';
import { type HsError, readRegularFile, removeStaleStaging, writeFileAtomic } from '@hs/streams';
import { usageHint } from '@hs/cli-options';
import type { CliIo } from './cli-io.js';
import { findInAncestors } from './checkout-search.js';
import { renderBenchPlot } from './bench-plot.js';
import { renderBenchMarkdown } from './bench-report-markdown.js';
import { parseBenchReport } from './bench-report-schema.js';
import { BENCH_SECTIONS, parseBenchSections } from './bench-sections.js';
import { ExitCode, type ExitCodeValue } from './exit-codes.js';

/** Options of `hs bench`. */
export interface BenchCommandOptions {
  /** Frames per repeat of each two-operator series (`HS_BENCH_FRAMES`); a positive integer. */
  readonly frames: number;
  /** Repeats of each series (`HS_BENCH_REPEATS`); a positive integer. */
  readonly repeats: number;
  /** Directory for `bench.json`, `bench.md` and `bench-latency.svg`, relative to `io.cwd`. */
  readonly outDir: string;
  /**
   * Comma-separated benchmark sections to run (`HS_BENCH_SECTIONS`), each one of `BENCH_SECTIONS`; must
   * include `chain`, whose repeats make the report. `undefined` runs them all.
   */
  readonly sections: string | undefined;
}

/**
 * `hs bench`: runs the benchmarks of the hs checkout around `io.cwd` (`tooling/benchmarks`, its `bench`
 * script, the packages already built) with `HS_BENCH_FRAMES`, `HS_BENCH_REPEATS` and `HS_BENCH_REPORT`
 * set (other `HS_BENCH_*` variables pass through from `io.env`), echoes their text, then writes the raw
 * report `bench.json`, the Markdown table `bench.md` and the plot of the latency distributions
 * `bench-latency.svg` into `outDir` (`writeFileAtomic` of @hs/streams: a symlinked `--out` is refused, a
 * symlink or FIFO planted at an output path is replaced, never written through; staging files of killed
 * runs are removed first).
 *
 * @returns `ExitCode.Success`; `ExitCode.Usage` (nothing run or created) for an unknown section, sections
 *   without `chain`, or outside an hs checkout; `ExitCode.Failure` when the benchmarks exit non-zero, their
 *   report is malformed, or the outputs cannot be written.
 */
export async function benchCommand(options: BenchCommandOptions, io: CliIo): Promise<ExitCodeValue> {
  const sections = parseBenchSections(options.sections ?? BENCH_SECTIONS.join(','), '--sections');
  if (!sections.ok) {
    io.err(`hs: ${sections.error.message}`);
    io.err(usageHint('hs bench'));
    return ExitCode.Usage;
  }
  if (!sections.value.includes('chain')) {
    io.err(`hs: InvalidArgument: --sections ${options.sections} leaves out 'chain', whose repeats make the report; add it`);
    io.err(usageHint('hs bench'));
    return ExitCode.Usage;
  }
  const manifest = await findInAncestors(io.cwd, join('tooling', 'benchmarks', 'package.json'));
  if (manifest === undefined) {
    io.err(`hs: NotFound: no tooling/benchmarks in ${io.cwd} or its parents; run hs bench inside an hs checkout (after pnpm install and pnpm build)`);
    io.err(usageHint('hs bench'));
    return ExitCode.Usage;
  }
  const benchDir = dirname(manifest);
  const script = await benchScript(manifest);
  if (script === undefined) {
    io.err(`hs: InvalidArgument: ${manifest} has no "bench" script`);
    io.err(usageHint('hs bench'));
    return ExitCode.Usage;
  }
  const outDir = resolve(io.cwd, options.outDir);
  try {
    await createOutputDirectory(outDir, '--out'); // a symlinked --out is refused
    await removeStaleStaging(outDir);
  } catch (thrown) {
    io.err(`hs: ${(thrown as HsError).message}; choose a writable --out`);
    return ExitCode.Failure;
  }
  const reportPath = join(outDir, 'bench.json');
  const env = {
    ...io.env,
    PATH: [join(benchDir, 'node_modules', '.bin'), dirname(process.execPath), io.env['PATH'] ?? ''].join(delimiter),
    HS_BENCH_FRAMES: String(options.frames),
    HS_BENCH_REPEATS: String(options.repeats),
    HS_BENCH_REPORT: reportPath,
    HS_BENCH_SECTIONS: sections.value.join(','),
  };
  const exitCode = await runScript(script, benchDir, env, io);
  if (exitCode !== 0) {
    io.err(`hs: the benchmarks (${script}, in ${benchDir}) exited with ${exitCode}`);
    return ExitCode.Failure;
  }
  const text = await readRegularFile(reportPath, { maxBytes: MAX_REPORT_BYTES }).then(
    (bytes) => bytes.toString('utf8'),
    () => undefined,
  );
  if (text === undefined) {
    io.err(`hs: the benchmarks did not write ${reportPath}; is tooling/benchmarks older than this hs?`);
    return ExitCode.Failure;
  }
  const report = parseBenchReport(text, reportPath);
  if (!report.ok) {
    io.err(`hs: ${report.error.message}`);
    return ExitCode.Failure;
  }
  const markdownPath = join(outDir, 'bench.md');
  const plotPath = join(outDir, 'bench-latency.svg');
  try {
    // Atomic, never through a symlink or FIFO planted in a shared --out.
    await writeFileAtomic(markdownPath, renderBenchMarkdown(report.value));
    await writeFileAtomic(plotPath, await renderBenchPlot(report.value));
  } catch (thrown) {
    io.err(`hs: ${(thrown as HsError).message}; choose a writable --out`);
    return ExitCode.Failure;
  }
  io.out(`wrote ${reportPath}, ${markdownPath} and ${plotPath}`);
  return ExitCode.Success;
}

/** The largest `bench.json` read (a report is a few hundred KiB). */
const MAX_REPORT_BYTES = 256 * 2 ** 20;

async function benchScript(manifestPath: string): Promise<string | undefined> {
  try {
    const manifest = JSON.parse((await readRegularFile(manifestPath)).toString('utf8')) as { scripts?: Record<string, unknown> };
    const script = manifest.scripts?.['bench'];
    return typeof script === 'string' ? script : undefined;
  } catch {
    return undefined;
  }
}

/** Runs `script` in a shell in `cwd`, echoing its output lines; resolves with its exit code (1 when killed by a signal). */
function runScript(script: string, cwd: string, env: Record<string, string | undefined>, io: CliIo): Promise<number> {
  return new Promise((done) => {
    const child = spawn(script, { cwd, env, shell: true, stdio: ['ignore', 'pipe', 'pipe'] });
    createInterface({ input: child.stdout }).on('line', io.out);
    createInterface({ input: child.stderr }).on('line', io.err);
    child.on('error', (error) => {
      io.err(`hs: cannot start the benchmarks: ${error.message}`);
      done(1);
    });
    child.on('close', (code) => done(code ?? 1));
  });
}
