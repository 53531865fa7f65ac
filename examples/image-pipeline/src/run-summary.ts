import type { ImageGraph } from './pipeline.js';

/**
 * The lines printed after a run: the statistics sink's figures, then the PNG files written, e.g.
 * `statistics over 8 downscaled frames (32768 pixels): mean 127.31  min 3  max 250` and
 * `wrote 8 PNG files to out (out/frame-00000.png ... out/frame-00007.png)`.
 */
export function runSummaryLines(pipeline: Pick<ImageGraph, 'pngWriter' | 'statistics'>, outDir: string): string[] {
  const stats = pipeline.statistics.statistics;
  return [
    `statistics over ${stats.frames} downscaled frames (${stats.pixels} pixels): ` +
      `mean ${stats.mean.toFixed(2)}  min ${stats.min}  max ${stats.max}`,
    describeWritten(pipeline.pngWriter.written, outDir),
  ];
}

/** `wrote 1 PNG file to out (out/frame-00000.png)`, `wrote 3 PNG files to out (a ... c)`, `wrote 0 PNG files to out`. */
function describeWritten(paths: readonly string[], outDir: string): string {
  const count = `${paths.length} PNG ${paths.length === 1 ? 'file' : 'files'}`;
  const range = paths.length === 0 ? '' : paths.length === 1 ? ` (${paths[0]})` : ` (${paths[0]} ... ${paths[paths.length - 1]})`;
  return `wrote ${count} to ${outDir}${range}`;
}
