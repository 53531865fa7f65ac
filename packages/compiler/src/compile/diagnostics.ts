import { ErrorCode, HsError } from '@hs/streams';

/**
 * Stable codes of compile diagnostics. Each names one kind of problem; the message says what is
 * wrong and what to do.
 * @example
 * ```ts
 * import { DiagnosticCode, Graph, Operator, compile, type OperatorSpec } from '@hs/compiler';
 * import { MemoryKind, unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * class Snapshot extends Operator {
 *   setup(spec: OperatorSpec): void {
 *     const representation = { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 2 };
 *     spec.output('image').producesTensor({ representation, bounds: { maxByteSpan: 1 << 16 }, storage: 'runtimePool' }); // nothing consumes it
 *   }
 *   compute(): void {}
 * }
 *
 * const graph = new Graph('snapshot');
 * graph.add(new Snapshot('snapshot'));
 * const plan = unwrap(compile(graph)); // compiles, with a warning
 * const unconsumed = plan.diagnostics.find((d) => d.code === DiagnosticCode.UnconsumedPool);
 * console.log(unconsumed === undefined ? 'no warnings' : `${unconsumed.code}: ${unconsumed.message}`);
 * ```
 */
export enum DiagnosticCode {
  /** Two operators share a name. */
  DuplicateOperatorName = 'DUPLICATE_OPERATOR_NAME',
  /** Two ports of one operator share a name (inputs and outputs share one namespace). */
  DuplicatePortName = 'DUPLICATE_PORT_NAME',
  /** A required input has no flow. */
  UnconnectedRequiredInput = 'UNCONNECTED_REQUIRED_INPUT',
  /** An input has more than one flow. */
  InputFanIn = 'INPUT_FAN_IN',
  /** The flows form a cycle. */
  GraphCycle = 'GRAPH_CYCLE',
  /** A queue depth (edge or `defaultQueueDepth`) is not a positive safe integer. */
  QueueDepthInvalid = 'QUEUE_DEPTH_INVALID',
  /**
   * (Warning.) A tensor output's literal `maxByteSpan` or `maxRank` is zero: the plan keeps its pool, which
   * rejects every allocation (spec, "Sized cold, borrowed hot": zero is not "unbounded").
   */
  TensorBoundsZero = 'TENSOR_BOUNDS_ZERO',
  /** A tensor output's `maxRank` is below its representation's rank. */
  TensorMaxRankTooSmall = 'TENSOR_MAX_RANK_TOO_SMALL',
  /** A producer's representation contradicts a consumer's requirement (memory kind, dtype or rank). */
  PhysicalTensorLayoutMismatch = 'PHYSICAL_TENSOR_LAYOUT_MISMATCH',
  /** A CUDA obligation (output, operator) has no device binding; the compiler never guesses device 0. */
  DeviceBindingRequired = 'DEVICE_BINDING_REQUIRED',
  /** A device binding names a port or operator that cannot take it (host-kind output, CPU device). */
  DeviceBindingInvalid = 'DEVICE_BINDING_INVALID',
  /** A device binding names an operator or output that does not exist. */
  DeviceBindingUnknownTarget = 'DEVICE_BINDING_UNKNOWN_TARGET',
  /** A device binding has no effect (warning): the operator is host-only. */
  DeviceBindingUnused = 'DEVICE_BINDING_UNUSED',
  /** One operator's obligations resolve to more than one device. */
  DeviceConflict = 'DEVICE_CONFLICT',
  /** A CUDA-device tensor flows into a host-only operator, which has no stream to copy it (warning). */
  DeviceTensorToHostOnlyOperator = 'DEVICE_TENSOR_TO_HOST_ONLY_OPERATOR',
  /** Pools that name one provider differ in memory kind or device, so no one resource can back them all. */
  ProviderMemoryMismatch = 'PROVIDER_MEMORY_MISMATCH',
  /** A runtime-pool output has no consumer, so its pool is reserved for nothing (warning). */
  UnconsumedPool = 'UNCONSUMED_POOL',
  /** A compile option has a value outside its domain, or is no option at all (a misspelt name). */
  CompileOptionInvalid = 'COMPILE_OPTION_INVALID',
  /** Exact integer arithmetic (slot bytes, slot count, pool bytes) exceeded 2^53 - 1. */
  ArithmeticOverflow = 'ARITHMETIC_OVERFLOW',
  /** A generation-zero parameter value is missing, unknown, mistyped or outside its field's domain. */
  ParameterValueInvalid = 'PARAMETER_VALUE_INVALID',
  /** A capacity-affecting parameter (byte span, memory kind) is runtime-mutable or sensitive. */
  ParameterNotCapacityEligible = 'PARAMETER_NOT_CAPACITY_ELIGIBLE',
  /** A parameter reference names another operator's parameters or a field of the wrong kind. */
  ParameterRefInvalid = 'PARAMETER_REF_INVALID',
  /** Checked byte-span arithmetic (or a projector) overflowed 2^64 - 1. */
  PhysicalTensorByteSpanOverflow = 'PHYSICAL_TENSOR_BYTE_SPAN_OVERFLOW',
  /** A byte-span projector returned an error other than overflow, or threw; only the code name is shown. */
  PhysicalTensorByteSpanProjectionFailed = 'PHYSICAL_TENSOR_BYTE_SPAN_PROJECTION_FAILED',
  /** A byte-span expression resolved to zero, to more than 2^53 - 1, or divided/aligned by zero. */
  TensorByteSpanInvalid = 'TENSOR_BYTE_SPAN_INVALID',
  /** A shape parameter's length differs from the output's exact rank. */
  TensorByteSpanRankMismatch = 'TENSOR_BYTE_SPAN_RANK_MISMATCH',
  /** A byte-span expression exceeds 32 nodes, depth 16, 8 dependencies or 8 shape extents. */
  TensorByteSpanExpressionLimit = 'TENSOR_BYTE_SPAN_EXPRESSION_LIMIT',
  /**
   * `inputMaxByteSpan(input)` has no single concrete bounded producer (disconnected, fan-in, unbounded, foreign
   * input), or the input subscribes to a topic without a declared `maxByteSpan`.
   */
  TensorByteSpanInputUnbounded = 'TENSOR_BYTE_SPAN_INPUT_UNBOUNDED',
  /** One projector id is bound to two different implementations (not one function object, not the same source text) in one compilation. */
  ByteSpanProjectorIdConflict = 'BYTE_SPAN_PROJECTOR_ID_CONFLICT',
  /** A memory-kind mapping is not exhaustive over its enum domain, has extra or duplicate cases, or names a non-enum/non-memory-kind field. */
  MemoryKindMappingInvalid = 'MEMORY_KIND_MAPPING_INVALID',
  /** A rate declaration cannot be resolved (follows a foreign input, a non-rate parameter, a trigger input of another operator). */
  RateDeclarationInvalid = 'RATE_DECLARATION_INVALID',
  /** An input's expected rate differs from its connected producer's rate (warning; the producer is authoritative). */
  RateExpectationMismatch = 'RATE_EXPECTATION_MISMATCH',
  /** An explicit queue depth is below the edge's semantic hard floor. */
  QueueDepthBelowHardFloor = 'QUEUE_DEPTH_BELOW_HARD_FLOOR',
  /** An explicit queue depth is below the nominal recommendation (warning; the explicit depth is kept). */
  QueueDepthBelowRecommendation = 'QUEUE_DEPTH_BELOW_RECOMMENDATION',
  /**
   * A topic endpoint (published output or subscribed input) uses cudaManaged memory, which has no
   * cross-process representation. Spec: "Current limitations" (managed memory does not cross processes).
   */
  TopicManagedMemory = 'TOPIC_MANAGED_MEMORY',
  /** A published output declares no tensor, no finite `maxByteSpan`, or a zero bound, so its boundary pool cannot be sized. */
  TopicBoundsRequired = 'TOPIC_BOUNDS_REQUIRED',
  /** A subscribed input requires no memory kind, so the import representation is unknown. */
  TopicMemoryKindRequired = 'TOPIC_MEMORY_KIND_REQUIRED',
  /** A topic is published twice, or published and subscribed in one graph, or an output publishes to two topics. */
  TopicEndpointConflict = 'TOPIC_ENDPOINT_CONFLICT',
  /** A topic option (`maxSubscribers`, a subscription's `maxByteSpan`) is outside its domain. */
  TopicOptionInvalid = 'TOPIC_OPTION_INVALID',
  /** A temporal contract's trigger or `required` input is unconnected (an optional input with no flow or topic): the operator could never run. */
  ContractInputUnconnected = 'CONTRACT_INPUT_UNCONNECTED',
}

/** `error` fails compilation; `warning` is kept in the plan. */
export type DiagnosticSeverity = 'error' | 'warning';

/** What a diagnostic is about. Names are authoring names; `edge` is a plan edge id. */
export type DiagnosticSubject =
  | {
      /** The graph as a whole. */
      readonly kind: 'graph';
      /** Graph name. */
      readonly graph: string;
    }
  | {
      /** One operator. */
      readonly kind: 'operator';
      /** Operator name. */
      readonly operator: string;
    }
  | {
      /** One port of an operator. */
      readonly kind: 'port';
      /** Operator name. */
      readonly operator: string;
      /** Port name. */
      readonly port: string;
    }
  | {
      /** One edge. */
      readonly kind: 'edge';
      /** Plan edge id (`producer.port->consumer.port`). */
      readonly edge: string;
    }
  | {
      /** One compile option. */
      readonly kind: 'option';
      /** Option path (for example `deployment.bindTensorOutputDevice.op.port`). */
      readonly option: string;
    }
  | {
      /** One external topic. */
      readonly kind: 'topic';
      /** Topic name. */
      readonly topic: string;
    }
  | {
      /** One parameter field of an operator. */
      readonly kind: 'parameter';
      /** Operator name. */
      readonly operator: string;
      /** Field name in the operator's parameter schema. */
      readonly field: string;
    };

/** One compile finding. */
export interface Diagnostic {
  /** Stable machine-readable code, for example `GRAPH_CYCLE`. */
  readonly code: DiagnosticCode;
  /** `error` (compile fails) or `warning` (kept in `plan.diagnostics`). */
  readonly severity: DiagnosticSeverity;
  /** What is wrong and what to do about it. */
  readonly message: string;
  /** What the diagnostic is about. */
  readonly subject: DiagnosticSubject;
}

/** Collects diagnostics during one `compile()` run, in the order the checks find them. */
export class DiagnosticLog {
  readonly #entries: Diagnostic[] = [];
  #errors = 0;

  /** Records an error. */
  error(code: DiagnosticCode, subject: DiagnosticSubject, message: string): void {
    this.#entries.push(Object.freeze({ code, severity: 'error', message, subject: Object.freeze(subject) }));
    this.#errors += 1;
  }

  /** Records a warning. */
  warning(code: DiagnosticCode, subject: DiagnosticSubject, message: string): void {
    this.#entries.push(Object.freeze({ code, severity: 'warning', message, subject: Object.freeze(subject) }));
  }

  /** True once any error was recorded. */
  get hasErrors(): boolean {
    return this.#errors > 0;
  }

  /** All entries so far. */
  get entries(): readonly Diagnostic[] {
    return this.#entries;
  }
}

/**
 * `compile()` failure: an `HsError` with code `ErrorCode.CompileError` carrying every diagnostic of
 * the run (`diagnostics`, errors and warnings, frozen). Its message lists the errors.
 * @example
 * ```ts
 * import { CompileError, Graph, Operator, compile, type OperatorSpec } from '@hs/compiler';
 * import { MemoryKind } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * class Renderer extends Operator {
 *   setup(spec: OperatorSpec): void {
 *     const representation = { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 3 };
 *     spec.output('image').producesTensor({ representation, bounds: { maxByteSpan: 8 << 20 }, storage: 'runtimePool' });
 *     spec.input('scene'); // required, never connected
 *   }
 *   compute(): void {}
 * }
 *
 * const graph = new Graph('render');
 * graph.add(new Renderer('renderer'));
 * const result = compile(graph); // no device binding either
 * if (!result.ok && result.error instanceof CompileError) {
 *   // Every diagnostic of the run, not only the first.
 *   for (const d of result.error.diagnostics) console.log(`${d.severity} ${d.code} (${d.subject.kind}): ${d.message}`);
 * }
 * ```
 */
export class CompileError extends HsError {
  /** Every diagnostic of the failed run, in check order. */
  readonly diagnostics: readonly Diagnostic[];

  constructor(graphName: string, diagnostics: readonly Diagnostic[]) {
    const errors = diagnostics.filter((d) => d.severity === 'error');
    super(
      ErrorCode.CompileError,
      `graph '${graphName}' failed to compile with ${errors.length} error${errors.length === 1 ? '' : 's'}:\n` +
        errors.map((d) => `  [${d.code}] ${d.message}`).join('\n'),
    );
    this.diagnostics = Object.freeze([...diagnostics]);
  }

  /** The error-severity diagnostics. */
  get errors(): readonly Diagnostic[] {
    return this.diagnostics.filter((d) => d.severity === 'error');
  }
}
