import { Device, ErrorCode, HsError } from '@hs/streams';
import { DiagnosticCode, type DiagnosticLog } from './diagnostics.js';
import { isValidQueueDepth } from './queue-depths.js';
import { RateRatio } from '../rates/rate.js';

/**
 * How CUDA-active partitions map to streams: `perPartition` (default) plans one stream per
 * (execution partition, device); `sharedProcessDevice` plans one stream per device for the whole
 * process. Frozen into the plan. Spec: "One stream per active execution partition and device".
 */
export type ComputeStreamPolicy = 'perPartition' | 'sharedProcessDevice';

/**
 * Explicit device placement. The compiler never guesses a device: every CUDA obligation must be
 * covered by one of these. Spec: "Current limitations" (one device per operator).
 */
export interface DeploymentBinding {
  /**
   * Device of a CUDA-kind tensor output, keyed `operator.port`; required for every runtime-pool output in
   * cudaDevice or cudaManaged memory (`DEVICE_BINDING_REQUIRED` otherwise).
   */
  readonly bindTensorOutputDevice?: Readonly<Record<string, Device>>;
  /**
   * Device of an operator, keyed by operator name; its CUDA pass-through outputs without their own binding
   * inherit it (runtime-pool outputs do not: they take only `bindTensorOutputDevice`).
   */
  readonly bindOperatorDevice?: Readonly<Record<string, Device>>;
  /**
   * Device of an external-topic endpoint of this graph, keyed by topic name (the spec's
   * `bind_imported_topic_device`, for both sides): required for a cudaDevice or pinnedHost
   * subscription, and for a pinnedHost publication (its producer gets a planned stream on that device
   * so either writer is available); a cudaDevice publication without its own output binding takes it.
   * Spec: "Current limitations", "Pinned-host readiness follows the writer".
   */
  readonly bindTopicDevice?: Readonly<Record<string, Device>>;
}

/** Options of `compile()`. */
export interface CompileOptions {
  /** Stream policy; default `perPartition`. */
  readonly computeStreamPolicy?: ComputeStreamPolicy;
  /** Queue depth (entries) of edges without an explicit depth and without rate evidence; default 2. */
  readonly defaultQueueDepth?: number;
  /**
   * Rate-aware queue sizing policy: `headroomRatio` scales the nominal-arrival recommendation
   * (compile-wide; default `new RateRatio(2, 1)`). Spec: "Size queue entries from nominal rates".
   */
  readonly automaticQueueSizing?: {
    /** Factor on the nominal arrivals (> 0); default 2/1. */
    readonly headroomRatio?: RateRatio;
  };
  /** Device placement. */
  readonly deployment?: DeploymentBinding;
}

/** Compile options with defaults applied, as frozen into the plan (binding keys sorted). */
export interface PlanOptions {
  /** The stream policy in force. */
  readonly computeStreamPolicy: ComputeStreamPolicy;
  /** Queue depth (entries) of edges without an explicit depth and without rate evidence. */
  readonly defaultQueueDepth: number;
  /** Headroom of the automatic queue recommendation. */
  readonly headroomRatio: RateRatio;
  /** Device placement, every map present (empty when not given). */
  readonly deployment: {
    /** Device per CUDA-kind tensor output, keyed `operator.port`. */
    readonly bindTensorOutputDevice: Readonly<Record<string, Device>>;
    /** Device per operator, keyed by operator name. */
    readonly bindOperatorDevice: Readonly<Record<string, Device>>;
    /** Device per external-topic endpoint, keyed by topic name. */
    readonly bindTopicDevice: Readonly<Record<string, Device>>;
  };
}

const DEFAULT_QUEUE_DEPTH = 2;

/**
 * Applies defaults and checks option values; bad values and unknown fields (a misspelt option) are reported
 * (`COMPILE_OPTION_INVALID`, `QUEUE_DEPTH_INVALID`) and replaced by defaults so the other checks still run.
 * @throws HsError `InvalidArgument` when `options` is not an object.
 */
export function resolveCompileOptions(options: CompileOptions | undefined, log: DiagnosticLog): PlanOptions {
  if (options !== undefined && (typeof options !== 'object' || options === null)) {
    throw new HsError(ErrorCode.InvalidArgument, 'compile(graph, options): options must be an object');
  }
  let computeStreamPolicy: ComputeStreamPolicy = 'perPartition';
  const policy = options?.computeStreamPolicy;
  if (policy === 'perPartition' || policy === 'sharedProcessDevice') {
    computeStreamPolicy = policy;
  } else if (policy !== undefined) {
    log.error(
      DiagnosticCode.CompileOptionInvalid,
      { kind: 'option', option: 'computeStreamPolicy' },
      `computeStreamPolicy ${JSON.stringify(policy)} is unknown; use 'perPartition' (default) or 'sharedProcessDevice'`,
    );
  }
  let defaultQueueDepth = DEFAULT_QUEUE_DEPTH;
  const depth = options?.defaultQueueDepth;
  if (isValidQueueDepth(depth)) {
    defaultQueueDepth = depth;
  } else if (depth !== undefined) {
    log.error(
      DiagnosticCode.QueueDepthInvalid,
      { kind: 'option', option: 'defaultQueueDepth' },
      `defaultQueueDepth ${String(depth)} is not a positive integer of entries (at most 2^53 - 1); pass N >= 1 or omit it (default ${DEFAULT_QUEUE_DEPTH})`,
    );
  }
  let headroomRatio = new RateRatio(2, 1);
  const headroom = options?.automaticQueueSizing?.headroomRatio;
  if (headroom instanceof RateRatio) {
    headroomRatio = headroom;
  } else if (headroom !== undefined) {
    log.error(
      DiagnosticCode.CompileOptionInvalid,
      { kind: 'option', option: 'automaticQueueSizing.headroomRatio' },
      'automaticQueueSizing.headroomRatio must be a RateRatio, for example new RateRatio(3, 2); omit it for the default 2/1',
    );
  }
  unknownFields('', options, COMPILE_OPTION_FIELDS, log);
  const sizing: unknown = options?.automaticQueueSizing;
  if (typeof sizing === 'object' && sizing !== null) unknownFields('automaticQueueSizing.', sizing, ['headroomRatio'], log);
  let deployment = options?.deployment;
  if (deployment !== undefined && (typeof deployment !== 'object' || deployment === null)) {
    log.error(
      DiagnosticCode.CompileOptionInvalid,
      { kind: 'option', option: 'deployment' },
      'deployment must be an object such as { bindTensorOutputDevice: { \'op.port\': Device.cuda(0) } }',
    );
    deployment = undefined;
  }
  unknownFields('deployment.', deployment, DEPLOYMENT_FIELDS, log);
  return {
    computeStreamPolicy,
    defaultQueueDepth,
    headroomRatio,
    deployment: {
      bindTensorOutputDevice: deviceRecord('deployment.bindTensorOutputDevice', deployment?.bindTensorOutputDevice, log),
      bindOperatorDevice: deviceRecord('deployment.bindOperatorDevice', deployment?.bindOperatorDevice, log),
      bindTopicDevice: deviceRecord('deployment.bindTopicDevice', deployment?.bindTopicDevice, log),
    },
  };
}

const COMPILE_OPTION_FIELDS: readonly string[] = ['computeStreamPolicy', 'defaultQueueDepth', 'automaticQueueSizing', 'deployment'];
const DEPLOYMENT_FIELDS: readonly string[] = ['bindTensorOutputDevice', 'bindOperatorDevice', 'bindTopicDevice'];

/** Reports each own field of `record` that is not one of `known` (a misspelt option would otherwise be ignored). */
function unknownFields(prefix: string, record: object | undefined, known: readonly string[], log: DiagnosticLog): void {
  if (record === undefined) return;
  for (const key of Object.keys(record)) {
    if (known.includes(key)) continue;
    log.error(
      DiagnosticCode.CompileOptionInvalid,
      { kind: 'option', option: `${prefix}${key}` },
      `${prefix}${key} is not an option of compile(); the ${prefix === '' ? 'options' : `${prefix.slice(0, -1)} fields`} are ${known.join(', ')}`,
    );
  }
}

function deviceRecord(option: string, record: unknown, log: DiagnosticLog): Record<string, Device> {
  const out: Record<string, Device> = {};
  if (record === undefined) return out;
  if (typeof record !== 'object' || record === null) {
    log.error(DiagnosticCode.CompileOptionInvalid, { kind: 'option', option }, `${option} must be an object mapping names to Device values`);
    return out;
  }
  for (const key of Object.keys(record).sort()) {
    const device: unknown = (record as Record<string, unknown>)[key];
    if (device instanceof Device) {
      out[key] = device;
    } else {
      log.error(
        DiagnosticCode.CompileOptionInvalid,
        { kind: 'option', option: `${option}.${key}` },
        `${option}['${key}'] is not a Device; use Device.cuda(n)`,
      );
    }
  }
  return out;
}
