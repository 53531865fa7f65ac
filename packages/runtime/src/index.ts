export { RunSession } from './run-session.js';
export type { RunSessionOptions, RunOptions, RunSessionEvents } from './run-session.js';
export type { OutputTap, TapOptions } from './output-tap.js';
export { formatMetrics } from './run-metrics.js';
export type { RunMetrics, OperatorMetrics, PoolMetrics, EdgeMetrics } from './run-metrics.js';
export { ReadableSource } from './readable-source.js';
export type { ReadableSourceOptions } from './readable-source.js';
export { WritableSink } from './writable-sink.js';
export { SubmissionPacer } from './submission-pacer.js';
