export { Graph } from './authoring/graph.js';
export type { FlowOptions, GraphFlow } from './authoring/graph.js';
export { Operator } from './authoring/operator.js';
export type { OperatorCallbackResult } from './authoring/operator.js';
export type { OperatorSpec } from './authoring/operator-spec.js';
export type { InputPort, OutputPort } from './authoring/ports.js';
export type { TensorInputRequirements, InputPortOptions } from './authoring/tensor-input-requirements.js';
export type {
  TensorOutputSpec,
  TensorRepresentation,
  TensorBounds,
  TensorOutputStorage,
  DeclaredTensorOutput,
} from './authoring/tensor-output-spec.js';
export type { ExecutionContext } from './execution-context.js';
export { compile } from './compile/compile.js';
export type { CompileOptions, ComputeStreamPolicy, DeploymentBinding, PlanOptions } from './compile/compile-options.js';
export { CompileError, DiagnosticCode } from './compile/diagnostics.js';
export type { Diagnostic, DiagnosticSeverity, DiagnosticSubject } from './compile/diagnostics.js';
export type { QueueDepthSource } from './compile/queue-depths.js';
export type { ExecutionPlan, ExecutionPlanRecords } from './plan/execution-plan.js';
export type { JsonValue } from './plan/plan-json.js';
export type {
  PortRef,
  PlanInput,
  PlanOutput,
  PlanTensorOutput,
  PlanOperator,
  PlanEdge,
  PlanPartition,
  PlanStream,
  TensorAllocationRecord,
  SlotCountDerivation,
  SlotCountTerm,
  SlotCountTermName,
} from './plan/plan-records.js';
