type Viz = Awaited<ReturnType<typeof import('@viz-js/viz').instance>>;
let viz: Promise<Viz> | undefined;

/**
 * Lays out a Graphviz DOT text (such as `ExecutionPlan.toDot()`) and renders it as an SVG document, with
 * Graphviz compiled to WebAssembly (`@viz-js/viz`): no native Graphviz, no browser. The WebAssembly module
 * is loaded on first use (commands that draw nothing start faster) and instantiated once per process.
 *
 * @returns the SVG text.
 * @throws Error with Graphviz's messages when the DOT text does not parse.
 */
export async function renderDotToSvg(dot: string): Promise<string> {
  viz ??= import('@viz-js/viz').then((module) => module.instance());
  const result = (await viz).render(dot, { format: 'svg' });
  if (result.status !== 'success') {
    throw new Error(`Graphviz could not lay out the plan: ${result.errors.map((e) => e.message).join('; ')}`);
  }
  return result.output;
}
