export { MAX_SESSION_OPERATORS, RunSession } from './run-session.js';
export { isInsideCompute } from './compute-scope.js';
export type { RunSessionOptions, RunOptions, RunSessionEvents } from './run-session-options.js';
export type { PoolResourceBindings } from './pool-resource-bindings.js';
export type { SessionClock } from './session-clock.js';
export { ManualClock } from './manual-clock.js';
export type { OutputTap, TapOptions } from './output-tap.js';
export { MAX_TAP_QUEUE_DEPTH } from './output-tap.js';
export { formatMetrics } from './run-metrics.js';
export type { RunMetrics, OperatorMetrics, PoolMetrics, EdgeMetrics, TopicMetrics } from './run-metrics.js';
export { ReadableSource } from './readable-source.js';
export type { ReadableSourceOptions } from './readable-source.js';
export { WritableSink } from './writable-sink.js';
export { DeviceCopy } from './device-copy.js';
export type { DeviceCopyOptions } from './device-copy.js';
export { SubmissionPacer } from './submission-pacer.js';
export { checkPipelineModule, pipelineSummary } from './pipeline-module.js';
export { createOutputDirectory } from './output-directory.js';
export type { PipelineModule, PipelineBuild, PipelineArguments, PipelineOutput, PipelineSessionOptions } from './pipeline-module.js';
export type {
  BoundaryProvider,
  BoundaryPublication,
  BoundarySubscription,
  BoundaryPublicationStats,
  TopicSubscriberLoss,
  PublicationRequest,
  SubscriptionRequest,
} from './boundary-provider.js';
