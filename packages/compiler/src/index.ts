export { Graph } from './authoring/graph.js';
export type { FlowOptions, GraphFlow, EdgeDropPolicy } from './authoring/graph.js';
export { Operator } from './authoring/operator.js';
export { MAX_TOPIC_NAME_LENGTH, assertTopicName } from './authoring/external-topics.js';
export type { TopicPublishOptions, TopicSubscribeOptions, TopicPublication, TopicSubscription } from './authoring/external-topics.js';
export type { OperatorCallbackResult } from './authoring/operator.js';
export type { OperatorSpec, TemporalContract, InputRetention, MissedTickPolicy } from './authoring/operator-spec.js';
export { DEFAULT_SCENARIO } from './authoring/operator-spec.js';
export type { InputPort, OutputPort, OutputRateDeclaration } from './authoring/ports.js';
export type { TensorInputRequirements, InputPortOptions } from './authoring/tensor-input-requirements.js';
export type {
  TensorOutputSpec,
  TensorRepresentation,
  TensorBounds,
  TensorOutputStorage,
  DeclaredTensorOutput,
  TensorOutputDerivations,
} from './authoring/tensor-output-spec.js';
export { Rate, RateRatio } from './rates/rate.js';
export type { Rational } from './rates/rational.js';
export { ParamField, integerParam, enumParam, shapeParam, memoryKindParam, rateParam } from './params/param-field.js';
export type { ParamMutability, ParamFieldDomain, RateDomain } from './params/param-field.js';
export { ParamSchema, paramSchema } from './params/param-schema.js';
export type { ParamFields, ParamValues } from './params/param-schema.js';
export { BoundParams, ParamRef } from './params/bound-params.js';
export { parameterMemoryKind, memoryKindCase } from './params/parameter-memory-kind.js';
export type { ParameterMemoryKind, MemoryKindCase } from './params/parameter-memory-kind.js';
export {
  TensorByteSpanExpression,
  tensorByteSpan,
  parameterContiguousByteSpan,
  parameterProjectedByteSpan,
} from './byte-span/byte-span-expression.js';
export { inputMaxByteSpan } from './byte-span/input-max-byte-span.js';
export type { ByteSpanNode, ByteSpanOperation, ByteSpanOperand } from './byte-span/byte-span-expression.js';
export { ByteSpanProjector } from './byte-span/byte-span-projector.js';
export type { ByteSpanProjectorFunction } from './byte-span/byte-span-projector.js';
export type { PortRateSource } from './plan/record-sources.js';
export type { ExecutionContext, PortRateView, TensorWindow } from './execution-context.js';
export { evaluateRateGeneration, generationZeroRates } from './plan/rate-generation.js';
export type { RateGeneration, RejectedRateGeneration, RateGenerationSnapshot, RateParameterValue } from './plan/rate-generation.js';
export { renderRateQueueInspection, RATE_QUEUE_INSPECTION_SCHEMA } from './plan/rate-queue-inspection.js';
export type { RateQueueInspectionFormat } from './plan/rate-queue-inspection.js';
export { compile } from './compile/compile.js';
export type { CompileOptions, ComputeStreamPolicy, DeploymentBinding, PlanOptions } from './compile/compile-options.js';
export { CompileError, DiagnosticCode } from './compile/diagnostics.js';
export type { Diagnostic, DiagnosticSeverity, DiagnosticSubject } from './compile/diagnostics.js';
export type { QueueDepthSource } from './plan/record-sources.js';
export type { ExecutionPlan, ExecutionPlanRecords } from './plan/execution-plan.js';
export type { JsonValue } from './plan/plan-json.js';
export type { PlanInput, PlanOutput, PlanTensorOutput, PlanOperator, PlanSchedule, PlanRetention } from './plan/operator-records.js';
export type {
  PortRef,
  PlanEdge,
  PlanPartition,
  PlanStream,
  TensorAllocationRecord,
  SlotCountDerivation,
  SlotCountTerm,
  SlotCountTermName,
  ByteSpanDerivationRecord,
  PlanParams,
  PlanParamField,
  PortRateRecord,
  AccumulationHorizonRecord,
  HardFloorContributor,
  PlanRateTerm,
  QueueSizingRecipe,
  PoolCapacityDependency,
  ProviderAllocationPlan,
  FusedEdgeRecord,
  ReleaseStreamCapDerivation,
  BoundaryPoolInfo,
  TopicEndpointRecord,
} from './plan/plan-records.js';
