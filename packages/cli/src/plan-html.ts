/** What `renderPlanHtml` puts on the page. */
export interface PlanHtmlContent {
  /** Page title: the pipeline's name. */
  readonly title: string;
  /** One sentence under the title. */
  readonly description: string;
  /** The plan picture, an SVG document (an XML declaration and doctype before `<svg` are dropped). */
  readonly svg: string;
  /** `ExecutionPlan.toText()`. */
  readonly text: string;
  /** `ExecutionPlan.toJSON()` serialized. */
  readonly json: string;
}

/**
 * A self-contained HTML page (no scripts, no external resources) showing the plan picture inline, the
 * plan's text summary, and its canonical JSON in a collapsed section.
 */
export function renderPlanHtml(content: PlanHtmlContent): string {
  const svgStart = content.svg.indexOf('<svg');
  const svg = svgStart < 0 ? '' : content.svg.slice(svgStart);
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<title>hs plan: ${escapeHtml(content.title)}</title>`,
    '<style>body{font-family:system-ui,sans-serif;margin:2rem;color:#222}figure{margin:1rem 0;overflow:auto}pre{background:#f6f6f6;padding:1rem;overflow:auto;font-size:0.85rem}</style>',
    '</head>',
    '<body>',
    `<h1>hs plan: ${escapeHtml(content.title)}</h1>`,
    `<p>${escapeHtml(content.description)}</p>`,
    '<p>Boxes are operators (device, stream) inside their execution partitions; edges carry the queue depth and the pool; bold edges are fused (no fences); notes are pools with their slot-count derivation.</p>',
    `<figure>${svg}</figure>`,
    '<h2>Plan</h2>',
    `<pre>${escapeHtml(content.text)}</pre>`,
    '<details><summary>Plan JSON</summary>',
    `<pre>${escapeHtml(content.json)}</pre>`,
    '</details>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
