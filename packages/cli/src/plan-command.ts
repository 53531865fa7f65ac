import { resolve } from 'node:path';
import { type HsError, writeFileAtomic } from '@hs/streams';
import { usageHint } from '@hs/cli-options';
import type { CliIo } from './cli-io.js';
import { ExitCode, type ExitCodeValue } from './exit-codes.js';
import { preparePipeline } from './pipeline-preparation.js';
import { type PlanFormat, choosePlanFormat } from './plan-format.js';
import { renderPlanHtml } from './plan-html.js';
import { renderDotToSvg } from './plan-svg.js';

/** Options of `hs plan`. */
export interface PlanCommandOptions {
  readonly target: string;
  readonly moduleArgs: readonly string[];
  /** The format flag given; `undefined` takes the format from `outFile`'s extension, else `text` (see `choosePlanFormat`). */
  readonly format: PlanFormat | undefined;
  /** File to write, relative to `io.cwd`; `undefined` writes to `io.out`. */
  readonly outFile: string | undefined;
}

/**
 * `hs plan`: prepares the pipeline (load, parse, build, compile; nothing is allocated or run, the
 * module's `prepareRun()` is not called) and renders its plan: `text` (`toText()`), `json` (canonical
 * `toJSON()`, 2-space indented), `dot` (`toDot()`), `svg` (the DOT laid out by Graphviz), or `html` (a
 * page with the SVG, the text and the JSON).
 *
 * Without a format flag, `-o`'s extension picks the format (`plan.svg` is SVG).
 *
 * @returns `ExitCode.Success`, `ExitCode.Usage` or `ExitCode.Failure` as `preparePipeline` decides;
 *   `ExitCode.Usage` (before the module is loaded) when `-o`'s extension names no format (`plan.png`) or
 *   the format flag and the extension disagree;
 *   `ExitCode.Failure` when the output file cannot be written.
 */
export async function planCommand(options: PlanCommandOptions, io: CliIo): Promise<ExitCodeValue> {
  const path = options.outFile === undefined ? undefined : resolve(io.cwd, options.outFile);
  const format = choosePlanFormat(options.format, path);
  if (!format.ok) {
    io.err(`hs: ${format.error.message}`);
    io.err(usageHint('hs plan'));
    return ExitCode.Usage;
  }
  const prepared = await preparePipeline('hs plan', options.target, options.moduleArgs, io);
  if (!prepared.ok) return prepared.exitCode;
  const { loaded, plan } = prepared.value;
  let rendered: string;
  switch (format.value) {
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
  if (path === undefined) {
    io.out(rendered.replace(/\n$/, ''));
    return ExitCode.Success;
  }
  try {
    // Atomic, never through a symlink or FIFO planted at `path`; a symlinked folder is refused.
    await writeFileAtomic(path, rendered.endsWith('\n') ? rendered : `${rendered}\n`);
  } catch (thrown) {
    const error = thrown as HsError;
    const code = (error.cause as NodeJS.ErrnoException | undefined)?.code;
    io.err(code === undefined ? `hs: ${error.message}; choose a writable file with -o` : `hs: ${error.code}: cannot write ${path} (${code}); choose a writable file with -o`);
    return ExitCode.Failure;
  }
  io.err(`wrote the ${format.value} plan of ${loaded.module.name} to ${path}`);
  return ExitCode.Success;
}
