import { join } from 'node:path';
import { type ExecutionPlan, Graph, Rate, compile } from '@hs/compiler';
import { ErrorCode, HsError, ok, type Result } from '@hs/streams';
import type { Photo } from './bundled-photo.js';
import { ImuModel, type ImuMotion, DEFAULT_MOTION } from './imu-model.js';
import { CameraSource } from './operators/camera-source.js';
import { Fusion } from './operators/fusion.js';
import { FusionRecorder } from './operators/fusion-recorder.js';
import { ImuSource } from './operators/imu-source.js';

/** The camera's frame rate, exact: 60 Hz. */
export const CAMERA_RATE = Rate.hz(60);
/** The IMU's sample rate: 1 kHz. */
export const IMU_RATE = Rate.hz(1000);
/** The recorder's clock: 10 Hz, six times slower than the results arrive. */
export const RECORDER_RATE = Rate.hz(10);
/**
 * Entries of the fusion's IMU window: what rate sizing gives the IMU edge, ceil(1000 Hz / 60 Hz) = 17
 * nominal arrivals per frame times the default headroom 2 = 34, so each frame takes every queued sample.
 */
export const IMU_WINDOW_ENTRIES = 34;
/** Queue entries on the recorder's edge (and its window): a short queue, so the slow branch drops the oldest. */
export const RECORDER_QUEUE_DEPTH = 4;
/** The file the recorder writes in the output directory. */
export const RECORD_FILE = 'fusion.jsonl';
/** Longest accepted run, in seconds (one hour). */
export const MAX_SECONDS = 3600;

/** Options of `buildSensorFusionGraph`. */
export interface SensorFusionOptions {
  /** The photo the camera frames carry. */
  readonly photo: Photo;
  /** Seconds of data: 60 frames and 1000 IMU samples per second; an integer from 1 to `MAX_SECONDS`. */
  readonly seconds: number;
  /** Directory of the recorder's `fusion.jsonl` (must exist when the run starts). */
  readonly outDir: string;
  /** The IMU's motion and noise; default `DEFAULT_MOTION`. */
  readonly motion?: ImuMotion;
}

/** The example graph before compilation, and the operators whose figures callers read. */
export interface SensorFusionGraph {
  readonly graph: Graph;
  readonly camera: CameraSource;
  readonly imu: ImuSource;
  readonly fusion: Fusion;
  readonly recorder: FusionRecorder;
  /** Path of the recorder's JSON-lines file. */
  readonly recordPath: string;
}

/** Edge ids of the plan. */
export const EDGES = Object.freeze({
  frames: 'camera.frames->fusion.frames',
  imu: 'imu.samples->fusion.imu',
  results: 'fusion.results->recorder.results',
});

/**
 * Builds the example graph (uncompiled), all on the host (no device binding needed):
 *
 * ```text
 * camera (clock 60 Hz, pinnedHost uint8 [129,128,4]) --frames (trigger)--> fusion --results--> recorder (clock 10 Hz, window 4)
 * imu    (clock 1 kHz, host float64 [8])             --imu (window 34)--->        (queue 4, dropOldest)
 * ```
 *
 * The camera and IMU edges are sized from the rates and the fusion's contract (automatic depth); the
 * recorder's edge has an explicit depth of 4 and `dropOldest`.
 * @throws HsError `InvalidArgument` when `seconds` is not an integer from 1 to `MAX_SECONDS`.
 */
export function buildSensorFusionGraph(options: SensorFusionOptions): SensorFusionGraph {
  if (!Number.isSafeInteger(options.seconds) || options.seconds < 1 || options.seconds > MAX_SECONDS) {
    throw new HsError(ErrorCode.InvalidArgument, `seconds must be an integer from 1 to ${MAX_SECONDS}, got ${options.seconds}`);
  }
  const recordPath = join(options.outDir, RECORD_FILE);
  const graph = new Graph('sensor-fusion');
  const camera = graph.add(new CameraSource('camera', { photo: options.photo, rate: CAMERA_RATE, frames: 60 * options.seconds }));
  const imu = graph.add(new ImuSource('imu', { model: new ImuModel(options.motion ?? DEFAULT_MOTION), rate: IMU_RATE, samples: 1000 * options.seconds }));
  const fusion = graph.add(new Fusion('fusion', { frameRate: CAMERA_RATE, imuRate: IMU_RATE, imuWindowEntries: IMU_WINDOW_ENTRIES }));
  const recorder = graph.add(new FusionRecorder('recorder', { path: recordPath, rate: RECORDER_RATE, entries: RECORDER_QUEUE_DEPTH }));
  graph.addFlow(camera.frames, fusion.frames);
  graph.addFlow(imu.samples, fusion.imu);
  graph.addFlow(fusion.results, recorder.results, { queueDepth: RECORDER_QUEUE_DEPTH, dropPolicy: 'dropOldest' });
  return { graph, camera, imu, fusion, recorder, recordPath };
}

/** The built pipeline: the graph, its operators and its compiled plan. */
export interface SensorFusionPipeline extends SensorFusionGraph {
  readonly plan: ExecutionPlan;
}

/**
 * `buildSensorFusionGraph`, compiled.
 * @returns the pipeline, or the compile failure (`ErrorCode.CompileError` with diagnostics).
 * @throws HsError `InvalidArgument` for options outside their domain.
 */
export function buildSensorFusionPipeline(options: SensorFusionOptions): Result<SensorFusionPipeline> {
  const built = buildSensorFusionGraph(options);
  const plan = compile(built.graph);
  if (!plan.ok) return plan;
  return ok({ ...built, plan: plan.value });
}
