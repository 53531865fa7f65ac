import type { TopLevelSpec } from 'vega-lite';
import type { BenchReport } from './bench-report-schema.js';

/**
 * The latency distributions of a benchmark report as an SVG document: one row per series, a box plot of
 * its repeats (whiskers at min and max) with every repeat drawn as a tick, nanoseconds per frame on the x
 * axis. Vega-Lite compiled to Vega, rendered headless (no canvas, no browser); both are loaded on first use.
 */
export async function renderBenchPlot(report: BenchReport): Promise<string> {
  const [vega, vegaLite] = await Promise.all([import('vega'), import('vega-lite')]);
  const values = report.series.flatMap((s) => s.samples.map((ns) => ({ series: s.baseline ? `${s.label} (baseline)` : s.label, ns })));
  const order = report.series.map((s) => (s.baseline ? `${s.label} (baseline)` : s.label));
  const y = { field: 'series', type: 'nominal', sort: order, title: null, axis: { labelLimit: 400 } } as const;
  const spec: TopLevelSpec = {
    title: `hs bench: ns per frame over ${report.repeats} repeats of ${report.frames} frames`,
    width: 520,
    data: { values },
    layer: [
      { mark: { type: 'boxplot', extent: 'min-max', size: 14 }, encoding: { y, x: { field: 'ns', type: 'quantitative', title: 'ns per frame', scale: { zero: true } } } },
      { mark: { type: 'tick', color: 'black', thickness: 1 }, encoding: { y, x: { field: 'ns', type: 'quantitative' } } },
    ],
  };
  const view = new vega.View(vega.parse(vegaLite.compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
