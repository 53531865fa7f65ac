import { Device, ok, type Result } from '@hs/streams';
import { Graph, compile, type ExecutionPlan } from '@hs/compiler';
import type { ImageBounds, RgbaImage } from '../../../examples/image-pipeline/src/image-input.js';
import { Downscale } from '../../../examples/image-pipeline/src/operators/downscale.js';
import { Grayscale } from '../../../examples/image-pipeline/src/operators/grayscale.js';
import { ImageSource } from '../../../examples/image-pipeline/src/operators/image-source.js';
import { StatisticsSink } from '../../../examples/image-pipeline/src/operators/statistics-sink.js';

/** Image sizes the soak graph accepts: small frames, so a million of them measure hs rather than pixel loops. */
export const SOAK_BOUNDS: ImageBounds = Object.freeze({ minWidth: 2, minHeight: 2, maxWidth: 32, maxHeight: 32 });

/** The soak graph's fastest source rate (the example's ceiling), in Hz. */
export const SOAK_RATE_HZ = 1e6;

/** A compiled soak graph and the sinks whose counts a run checks. */
export interface SoakGraph {
  readonly plan: ExecutionPlan;
  readonly statistics: StatisticsSink;
  readonly mirror: StatisticsSink;
}

/** Two deterministic RGBA test images (32x32 and 18x10 pixels) from a seed. */
export function soakImages(seed: number): RgbaImage[] {
  const image = (name: string, width: number, height: number, salt: number): RgbaImage => {
    const data = new Uint8Array(width * height * 4);
    for (let i = 0; i < data.length; i++) data[i] = (i * 31 + seed * 17 + salt) & 0xff;
    return { name, width, height, data };
  };
  return [image('soak-a', 32, 32, 1), image('soak-b', 18, 10, 2)];
}

/**
 * The image-pipeline example graph (source -> grayscale -> downscale, fanned out to two consumers) with
 * both consumers statistics sinks: the example's PNG writer would spend a million frames on file I/O and
 * caps a run at 100 000 files. Operators are the example's own; the device outputs live on `cuda:0`.
 * @returns the compiled graph, or the compile failure.
 * @throws HsError InvalidArgument for a frame count the image source refuses.
 */
export function buildSoakGraph(frames: number, images: readonly RgbaImage[]): Result<SoakGraph> {
  const smallFrameBytes = (SOAK_BOUNDS.maxWidth >> 1) * (SOAK_BOUNDS.maxHeight >> 1);
  const graph = new Graph('image-pipeline-soak');
  const source = graph.add(new ImageSource('source', { images, frames, rateHz: SOAK_RATE_HZ, bounds: SOAK_BOUNDS }));
  const grayscale = graph.add(new Grayscale('grayscale', SOAK_BOUNDS));
  const downscale = graph.add(new Downscale('downscale', SOAK_BOUNDS));
  const statistics = graph.add(new StatisticsSink('statistics', smallFrameBytes));
  const mirror = graph.add(new StatisticsSink('mirror', smallFrameBytes));
  graph.addFlow(source.frames, grayscale.rgba, { queueDepth: 2 });
  graph.addFlow(grayscale.gray, downscale.gray, { queueDepth: 2 });
  graph.addFlow(downscale.small, statistics.frames, { queueDepth: 2 });
  graph.addFlow(downscale.small, mirror.frames, { queueDepth: 2 });
  const plan = compile(graph, {
    deployment: { bindTensorOutputDevice: { [grayscale.gray.key]: Device.cuda(0), [downscale.small.key]: Device.cuda(0) } },
  });
  if (!plan.ok) return plan;
  return ok({ plan: plan.value, statistics, mirror });
}
