import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { CliIo } from './cli-io.js';
import { ExitCode, type ExitCodeValue } from './exit-codes.js';
import { preparePipeline } from './pipeline-preparation.js';
import { renderPlanHtml } from './plan-html.js';
import { renderDotToSvg } from './plan-svg.js';

/** Renderings of `hs plan`. */
export type PlanFormat = 'text' | 'json' | 'dot' | 'svg' | 'html';

/** The formats, in the order `hs plan --help` lists them. */
export const PLAN_FORMATS: readonly PlanFormat[] = Object.freeze(['text', 'json', 'dot', 'svg', 'html']);

/** Options of `hs plan`. */
export interface PlanCommandOptions {
  readonly target: string;
  readonly moduleArgs: readonly string[];
  readonly format: PlanFormat;
  /** File to write, relative to `io.cwd`; `undefined` writes to `io.out`. */
  readonly outFile: string | undefined;
}

/**
 * `hs plan`: prepares the pipeline (load, parse, build, compile; nothing is allocated or run, the
 * module's `prepareRun()` is not called) and renders its plan: `text` (`toText()`), `json` (canonical
 * `toJSON()`, 2-space indented), `dot` (`toDot()`), `svg` (the DOT laid out by Graphviz), or `html` (a
 * page with the SVG, the text and the JSON).
 *
 * @returns `ExitCode.Success`, `ExitCode.Usage` or `ExitCode.Failure` as `preparePipeline` decides, or
 *   `ExitCode.Failure` when the output file cannot be written.
 */
export async function planCommand(options: PlanCommandOptions, io: CliIo): Promise<ExitCodeValue> {
  const prepared = await preparePipeline(options.target, options.moduleArgs, io);
  if (!prepared.ok) return prepared.exitCode;
  const { loaded, plan } = prepared.value;
  let rendered: string;
  switch (options.format) {
    case 'text':
      rendered = plan.toText();
      break;
    case 'json':
      rendered = JSON.stringify(plan.toJSON(), null, 2);
      break;
    case 'dot':
      rendered = plan.toDot();
      break;
    case 'svg':
      rendered = await renderDotToSvg(plan.toDot());
      break;
    case 'html':
      rendered = renderPlanHtml({
        title: loaded.module.name,
        description: loaded.module.description,
        svg: await renderDotToSvg(plan.toDot()),
        text: plan.toText(),
        json: JSON.stringify(plan.toJSON(), null, 2),
      });
      break;
  }
  if (options.outFile === undefined) {
    io.out(rendered.replace(/\n$/, ''));
    return ExitCode.Success;
  }
  const path = resolve(io.cwd, options.outFile);
  try {
    await writeFile(path, rendered.endsWith('\n') ? rendered : `${rendered}\n`);
  } catch (thrown) {
    const code = (thrown as NodeJS.ErrnoException).code ?? 'unknown error';
    io.err(`error: cannot write ${path} (${code}); choose a writable file with -o`);
    return ExitCode.Failure;
  }
  io.err(`wrote the ${options.format} plan of ${loaded.module.name} to ${path}`);
  return ExitCode.Success;
}
