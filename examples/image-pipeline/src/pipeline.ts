import { type CompileOptions, type ExecutionPlan, Graph, compile } from '@hs/compiler';
import { Device, ok, type Result } from '@hs/streams';
import type { ImageBounds, RgbaImage } from './image-input.js';
import { Downscale } from './operators/downscale.js';
import { Grayscale } from './operators/grayscale.js';
import { ImageSource } from './operators/image-source.js';
import { PngWriter } from './operators/png-writer.js';
import { StatisticsSink } from './operators/statistics-sink.js';

/**
 * Images the example accepts by default: at least 2x2 pixels (the downscale needs one 2x2 block), at
 * most 1024x1024 (the source's pinned-host slots are then 4 MiB each).
 */
export const DEFAULT_IMAGE_BOUNDS: ImageBounds = Object.freeze({ minWidth: 2, minHeight: 2, maxWidth: 1024, maxHeight: 1024 });

/** Options of `buildImagePipeline`. */
export interface ImagePipelineOptions {
  /** Decoded images, emitted round-robin; at least one, each within `bounds`. */
  readonly images: readonly RgbaImage[];
  /** Frames the source emits; a positive integer, at most `MAX_FRAME_FILES` for the PNG writer. */
  readonly frames: number;
  /** Nominal source rate in Hz, from `MIN_RATE_HZ` to `MAX_RATE_HZ` (see `ImageSource`). */
  readonly rateHz: number;
  /** Directory for the PNG files. */
  readonly outDir: string;
  /** Accepted image sizes; they size every pool. Default `DEFAULT_IMAGE_BOUNDS`. */
  readonly bounds?: ImageBounds;
  /** Queue entries on every edge; default 2. */
  readonly queueDepth?: number;
}

/** The example graph before compilation, with the options it compiles with and the operators whose results callers read. */
export interface ImageGraph {
  readonly graph: Graph;
  /** Binds both CUDA device outputs to `Device.cuda(0)`. */
  readonly compileOptions: CompileOptions;
  readonly source: ImageSource;
  readonly pngWriter: PngWriter;
  readonly statistics: StatisticsSink;
}

/** The built pipeline: the graph, its compiled plan, and the operators whose results callers read. */
export interface ImagePipeline extends ImageGraph {
  readonly plan: ExecutionPlan;
}

/**
 * Builds the example graph (uncompiled):
 *
 * ```text
 * source (pinnedHost RGBA [H,W,4]) -> grayscale (cudaDevice [H,W]) -> downscale (cudaDevice [H/2,W/2]) -+-> png-writer
 *                                                                                                     +-> statistics
 * ```
 *
 * Both CUDA device outputs are bound to `Device.cuda(0)` (the compiler never guesses a device); on the
 * host backend that device is emulated in host memory.
 *
 * @throws HsError `ErrorCode.InvalidArgument` for options outside their documented domain.
 */
export function buildImageGraph(options: ImagePipelineOptions): ImageGraph {
  const bounds = options.bounds ?? DEFAULT_IMAGE_BOUNDS;
  const queueDepth = options.queueDepth ?? 2;
  const smallFrameBytes = (bounds.maxWidth >> 1) * (bounds.maxHeight >> 1);

  const graph = new Graph('image-pipeline');
  const source = graph.add(new ImageSource('source', { images: options.images, frames: options.frames, rateHz: options.rateHz, bounds }));
  const grayscale = graph.add(new Grayscale('grayscale', bounds));
  const downscale = graph.add(new Downscale('downscale', bounds));
  const pngWriter = graph.add(new PngWriter('png-writer', { outDir: options.outDir, maxFrameBytes: smallFrameBytes }));
  const statistics = graph.add(new StatisticsSink('statistics', smallFrameBytes));

  graph.addFlow(source.frames, grayscale.rgba, { queueDepth });
  graph.addFlow(grayscale.gray, downscale.gray, { queueDepth });
  graph.addFlow(downscale.small, pngWriter.frames, { queueDepth });
  graph.addFlow(downscale.small, statistics.frames, { queueDepth });

  const compileOptions: CompileOptions = {
    deployment: {
      bindTensorOutputDevice: {
        [grayscale.gray.key]: Device.cuda(0),
        [downscale.small.key]: Device.cuda(0),
      },
    },
  };
  return { graph, compileOptions, source, pngWriter, statistics };
}

/**
 * Builds the example graph (`buildImageGraph`) and compiles it with its device bindings.
 *
 * @returns the pipeline, or the compile failure (`ErrorCode.CompileError` with diagnostics).
 * @throws HsError `ErrorCode.InvalidArgument` for options outside their documented domain.
 */
export function buildImagePipeline(options: ImagePipelineOptions): Result<ImagePipeline> {
  const built = buildImageGraph(options);
  const plan = compile(built.graph, built.compileOptions);
  if (!plan.ok) return plan;
  return ok({ ...built, plan: plan.value });
}
