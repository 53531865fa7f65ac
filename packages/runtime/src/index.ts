export { RunSession } from './run-session.js';
export type { RunSessionOptions, RunOptions } from './run-session.js';
export { formatMetrics } from './run-metrics.js';
export type { RunMetrics, OperatorMetrics, PoolMetrics, EdgeMetrics } from './run-metrics.js';
