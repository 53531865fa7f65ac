import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderBenchPlot } from '../src/bench-plot.js';
import { renderBenchMarkdown } from '../src/bench-report-markdown.js';
import { type BenchReport, parseBenchReport } from '../src/bench-report-schema.js';
import { ExitCode } from '../src/index.js';
import { hs } from './run-hs.js';

/** The hint line under a usage error of hs bench. */
const BENCH_HINT = 'hint: hs bench --help lists the options';

const REPORT: BenchReport = {
  schema: 'hs-bench-report/1',
  node: 'v20.0.0',
  frames: 1000,
  frameBytes: 65536,
  repeats: 3,
  series: [
    { id: 'node-stream', label: 'Node Readable -> Writable', unit: 'ns/frame', baseline: true, samples: [300, 100, 200] },
    { id: 'pool-hop', label: 'hs pool hop', unit: 'ns/frame', baseline: false, samples: [400, 500, 450] },
  ],
};

/** Every element named `name` anywhere in the parsed SVG, with its attributes. */
function elements(svg: string, name: string): Record<string, unknown>[] {
  const doc = new XMLParser({ ignoreAttributes: false }).parse(svg) as Record<string, unknown>;
  const found: Record<string, unknown>[] = [];
  const visit = (node: unknown, key: string): void => {
    if (Array.isArray(node)) return node.forEach((n) => visit(n, key));
    if (typeof node !== 'object' || node === null) return;
    if (key === name) found.push(node as Record<string, unknown>);
    for (const [k, v] of Object.entries(node)) visit(v, k);
  };
  visit(doc, '');
  return found;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hs-bench-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('bench report', () => {
  it('renders medians, extremes and the ratio to the baseline median as a Markdown table', () => {
    const markdown = renderBenchMarkdown(REPORT);
    expect(markdown.split('\n')).toEqual(
      expect.arrayContaining([
        '| series | median ns/frame | min ns/frame | max ns/frame | repeats | vs baseline |',
        '| Node Readable -> Writable (baseline) | 200 | 100 | 300 | 3 | 1.00x |',
        '| hs pool hop | 450 | 400 | 500 | 3 | 2.25x |',
      ]),
    );
  });

  it('plots one box per series (median marked) and one tick per repeat (SVG parsed)', async () => {
    const svg = await renderBenchPlot(REPORT);
    const paths = elements(svg, 'path').map((p) => String(p['@_aria-label'] ?? ''));
    expect(paths.filter((label) => label.includes('Median of ns per frame'))).toEqual([
      expect.stringContaining('Median of ns per frame: 200'),
      expect.stringContaining('Median of ns per frame: 450'),
    ]);
    const ticks = elements(svg, 'path').filter((p) => p['@_aria-roledescription'] === 'tick');
    expect(ticks.map((t) => t['@_aria-label'])).toEqual([
      'ns: 300; series: Node Readable -> Writable (baseline)',
      'ns: 100; series: Node Readable -> Writable (baseline)',
      'ns: 200; series: Node Readable -> Writable (baseline)',
      'ns: 400; series: hs pool hop',
      'ns: 500; series: hs pool hop',
      'ns: 450; series: hs pool hop',
    ]);
    const texts = elements(svg, 'text').map((t) => String(t['#text'] ?? ''));
    expect(texts).toEqual(expect.arrayContaining(['Node Readable -> Writable (baseline)', 'hs pool hop', 'ns per frame']));
  });

  it.each([
    ['{', /not JSON/],
    ['{"schema":"other"}', /schema must be 'hs-bench-report\/1', got "other"/],
    [JSON.stringify({ ...REPORT, frames: 0 }), /frames must be a positive integer, got 0/],
    [JSON.stringify({ ...REPORT, series: [] }), /series must be a non-empty array/],
    [JSON.stringify({ ...REPORT, series: [{ ...REPORT.series[0], samples: [] }] }), /series\[0\] \(node-stream\) needs a non-empty array/],
    [JSON.stringify({ ...REPORT, series: [{ ...REPORT.series[1] }] }), /exactly one series must be the baseline, found 0/],
  ])('rejects %s with InvalidArgument', (text, message) => {
    const parsed = parseBenchReport(text, 'r.json');
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error.message).toMatch(message);
  });
});

describe('hs bench', () => {
  it('runs a tiny benchmark and writes the JSON report, the Markdown table and the latency plot', async () => {
    const outDir = join(dir, 'report');
    const { exitCode, out, err } = await hs(['bench', '--frames', '500', '--repeats', '2', '--sections', 'compile,chain', '--out', outDir], {
      env: { ...process.env, HS_BENCH_COMPILE_RUNS: '1', HS_BENCH_CLOCK_TICKS: '200' },
    });
    expect(err.filter((line) => line.startsWith('error'))).toEqual([]);
    expect(exitCode).toBe(ExitCode.Success);
    expect(out).toContain('two-operator chain, same frames, same run:');
    expect(out.some((line) => line.startsWith('compile() of a'))).toBe(true);
    expect(out.some((line) => line.startsWith('JS heap growth'))).toBe(false);
    expect(out.at(-1)).toBe(`wrote ${join(outDir, 'bench.json')}, ${join(outDir, 'bench.md')} and ${join(outDir, 'bench-latency.svg')}`);
    const report = parseBenchReport(await readFile(join(outDir, 'bench.json'), 'utf8'), 'bench.json');
    expect(report.ok && report.value.series.map((s) => [s.id, s.samples.length])).toEqual([
      ['node-stream', 2],
      ['pool-hop', 2],
      ['runtime-chain-fused', 2],
      ['runtime-chain-fenced', 2],
      ['runtime-chain-sampled', 2],
    ]);
    expect(report.ok && report.value.frames).toBe(500);
    const markdown = await readFile(join(outDir, 'bench.md'), 'utf8');
    expect(markdown).toMatch(/\| Node Readable -> Writable \(baseline\) \| \d+ \| \d+ \| \d+ \| 2 \| 1\.00x \|/);
    expect(markdown).toMatch(/\| hs RunSession, fullFences \| \d+ \| \d+ \| \d+ \| 2 \| \d+\.\d\dx \|/);
    expect(markdown).toMatch(/\| hs RunSession \(fused\), latency timed 1 in 64 \| \d+ \| \d+ \| \d+ \| 2 \| \d+\.\d\dx \|/);
    const svg = await readFile(join(outDir, 'bench-latency.svg'), 'utf8');
    expect(elements(svg, 'text').map((t) => String(t['#text'] ?? ''))).toContain('hs RunSession source -> sink (fused)');
  }, 120_000);

  it('refuses sections without chain before running anything', async () => {
    const { exitCode, err } = await hs(['bench', '--sections', 'heap,p2g', '--out', join(dir, 'never')]);
    expect(exitCode).toBe(ExitCode.Usage);
    expect(err).toEqual(["hs: InvalidArgument: --sections heap,p2g leaves out 'chain', whose repeats make the report; add it", BENCH_HINT]);
  });

  it.each([
    ['chain,foo', "hs: InvalidArgument: --sections: unknown section 'foo'; known: compile, chain, heap, p2g, ipc"],
    ['foo', "hs: InvalidArgument: --sections: unknown section 'foo'; known: compile, chain, heap, p2g, ipc"],
    ['chain,', "hs: InvalidArgument: --sections: empty section name in 'chain,'; known: compile, chain, heap, p2g, ipc"],
  ])('answers --sections %s with one line and exit code 2, creating nothing', async (sections, line) => {
    const outDir = join(dir, 'unknown-section', 'report');
    const { exitCode, out, err } = await hs(['bench', '--sections', sections, '--out', outDir]);
    expect({ exitCode, out, err }).toEqual({ exitCode: ExitCode.Usage, out: [], err: [line, BENCH_HINT] });
    await expect(stat(join(dir, 'unknown-section'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  // Node's recursive mkdir never returns for a folder under /proc; hs bench used to hang there.
  it.skipIf(process.platform !== 'linux')('answers an --out it cannot create with exit code 1 before running anything', async () => {
    const { exitCode, out, err } = await hs(['bench', '--sections', 'chain', '--out', '/proc/hs-no-such-folder/report']);
    expect(exitCode).toBe(ExitCode.Failure);
    expect(out).toEqual([]);
    expect(err).toEqual(['hs: InvalidArgument: --out: cannot create /proc/hs-no-such-folder/report: ENOENT; choose a writable --out']);
  });

  it('answers outside a checkout with exit code 2 and what to do', async () => {
    const { exitCode, err } = await hs(['bench'], { cwd: dir });
    expect(exitCode).toBe(ExitCode.Usage);
    expect(err).toEqual([`hs: NotFound: no tooling/benchmarks in ${dir} or its parents; run hs bench inside an hs checkout (after pnpm install and pnpm build)`, BENCH_HINT]);
  });
});
