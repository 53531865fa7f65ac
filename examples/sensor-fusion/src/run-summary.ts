import type { RunMetrics } from '@hs/runtime';
import { DEFAULT_MOTION } from './imu-model.js';
import { EDGES, type SensorFusionGraph } from './pipeline.js';

/**
 * The lines printed after a run, e.g.
 * `fused 300 frames with 5000 IMU samples; integrated yaw 2.4996 rad over 5.000 s of samples (motion model: 0.5 rad/s x 5.000 s = 2.5000 rad)` and
 * `recorder: 200 results written to out/fusion.jsonl, 100 dropped on its dropOldest edge`.
 */
export function runSummaryLines(built: SensorFusionGraph, metrics: RunMetrics): string[] {
  const { totalYaw, integratedSeconds } = built.fusion;
  const recorderEdge = metrics.edges.find((e) => e.id === EDGES.results);
  const lost = built.camera.dropped + built.imu.dropped + built.fusion.droppedResults;
  return [
    `fused ${built.camera.sent} frames with ${built.imu.sent} IMU samples; integrated yaw ${totalYaw.toFixed(4)} rad over ` +
      `${integratedSeconds.toFixed(3)} s of samples (motion model: ${DEFAULT_MOTION.yawRate} rad/s x ${integratedSeconds.toFixed(3)} s = ` +
      `${(DEFAULT_MOTION.yawRate * integratedSeconds).toFixed(4)} rad)`,
    `recorder: ${built.recorder.recorded} results written to ${built.recordPath}, ${recorderEdge?.dropped ?? 0} dropped on its dropOldest edge`,
    ...(lost === 0 ? [] : [`exhausted pools dropped ${built.camera.dropped} frames, ${built.imu.dropped} IMU samples, ${built.fusion.droppedResults} results`]),
  ];
}
