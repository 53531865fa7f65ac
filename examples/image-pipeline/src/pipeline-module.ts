import type { PipelineModule } from '@hs/runtime';
import { type HsError, errWithContext, ok } from '@hs/streams';
import { parseCliArguments, type CliOptions } from './cli-options.js';
import { prepareOutputDir } from './frame-output-dir.js';
import type { OutputDirLock } from './output-dir-lock.js';
import { loadImageInputs } from './image-input.js';
import { DEFAULT_IMAGE_BOUNDS, buildImageGraph } from './pipeline.js';
import { runSummaryLines } from './run-summary.js';

/**
 * The image pipeline as a `PipelineModule`, for `hs run image-pipeline -- [options]` and
 * `hs plan image-pipeline`: the same options as `pnpm run main` (`--input`, `--frames`, `--rate`, `--out`,
 * `--backend`), the same graph and device bindings, and the same statistics and files-written lines
 * at the end. The output directory is locked and cleared of old frame files only when a run is prepared
 * (`prepareRun`); the lock is released when the summary is printed, or, after a failed run, when the
 * process exits.
 */
const imagePipelineModule: PipelineModule<CliOptions> = {
  name: 'image-pipeline',
  description: 'Photos through grayscale and a 2x downscale, then a PNG writer and a statistics sink.',
  parseArguments(args, output) {
    const request = parseCliArguments(args, output);
    if (!request.ok) return request;
    return ok(request.value.kind === 'exit' ? request.value : { kind: 'build', options: request.value.options });
  },
  async build(options) {
    const images = await loadImageInputs(options.inputs, DEFAULT_IMAGE_BOUNDS);
    // Held from prepareRun() until the summary (a run that fails releases it when the process exits).
    let lock: OutputDirLock | undefined;
    const built = buildImageGraph({ images, frames: options.frames, rateHz: options.rateHz, outDir: options.outDir });
    return {
      graph: built.graph,
      compileOptions: built.compileOptions,
      sessionOptions: options.backend === undefined ? {} : { backend: options.backend },
      expectedFrames: options.frames,
      async prepareRun() {
        const prepared = await prepareOutputDir(options.outDir).catch((thrown: HsError) => {
          throw errWithContext(thrown, '--out').error;
        });
        lock = prepared.lock;
      },
      summary: () => {
        lock?.release();
        return runSummaryLines(built, options.outDir);
      },
    };
  },
};

export default imagePipelineModule;
