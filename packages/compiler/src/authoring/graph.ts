import { ErrorCode, HsError } from '@hs/streams';
import { layoutConflicts } from './layout-conflicts.js';
import { DeclarationWindow } from './declaration-window.js';
import { assertTopicName, type TopicPublication, type TopicPublishOptions, type TopicSubscribeOptions, type TopicSubscription } from './external-topics.js';
import { assertAuthoringName } from './names.js';
import { Operator } from './operator.js';
import { OperatorSpec } from './operator-spec.js';
import { InputPort, OutputPort } from './ports.js';

/** Options of `Graph.addFlow()`. */
export interface FlowOptions {
  /**
   * Queue entries on this edge (a positive integer); exact authority when given (below the edge's hard
   * floor: `QUEUE_DEPTH_BELOW_HARD_FLOOR`; below the nominal recommendation: a warning). When omitted,
   * rate-aware sizing picks the depth where the input has a rate and its consumer a temporal contract,
   * else the compile option `defaultQueueDepth` (at least the hard floor). An invalid value is reported
   * by `compile()` as `QUEUE_DEPTH_INVALID`. Spec: "Size queue entries from nominal rates".
   */
  readonly queueDepth?: number;
  /**
   * What an emit does when this edge's queue is full (default `'block'`). See `EdgeDropPolicy`.
   */
  readonly dropPolicy?: EdgeDropPolicy;
}

/**
 * What happens when a producer emits onto a full edge:
 * - `'block'`: the producer is not activated while the edge is full (backpressure); an emit that still
 *   finds it full (a second emit in one activation) returns `Backpressured`.
 * - `'dropOldest'`: the producer never waits for this edge; the oldest queued entry is evicted (its
 *   lease returned) to make room, and counted as dropped.
 * - `'dropNewest'`: the producer never waits for this edge; the new entry is not queued on it, and is
 *   counted as dropped (the emit still succeeds).
 * - `'reject'`: the producer never waits for this edge; an emit onto it while full returns
 *   `Backpressured` so the producer decides (keep the loan pending and retry, or let it go).
 */
export type EdgeDropPolicy = 'block' | 'dropOldest' | 'dropNewest' | 'reject';

const DROP_POLICIES: readonly EdgeDropPolicy[] = ['block', 'dropOldest', 'dropNewest', 'reject'];

/** One connection made by `Graph.addFlow()`. */
export interface GraphFlow {
  /** The producing output. */
  readonly output: OutputPort;
  /** The consuming input. */
  readonly input: InputPort;
  /** The depth given to `addFlow()`, unchecked; `undefined` when omitted. */
  readonly queueDepth: number | undefined;
  /** The edge's drop policy (`'block'` when omitted). */
  readonly dropPolicy: EdgeDropPolicy;
}

const graphOfOperator = new WeakMap<Operator, Graph>();

/**
 * A pipeline under construction: operators (each set up as it is added) and the flows between their
 * ports. `compile()` turns it into an `ExecutionPlan`.
 *
 * Authoring throws only for misuse that cannot be a graph at all (wrong port direction, a port of an
 * operator outside this graph, an operator added twice); every declaration conflict (duplicate
 * names, fan-in, layout mismatches, cycles, bad depths) is collected and reported by `compile()`.
 * @example
 * ```ts
 * import { Graph, Operator, Rate, compile, type InputPort, type OperatorSpec, type OutputPort } from '@hs/compiler';
 * import { MemoryKind, unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * const RGBA = { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 3 };
 * class Camera extends Operator {
 *   frames!: OutputPort;
 *   setup(spec: OperatorSpec): void {
 *     this.frames = spec.output('frames').producesTensor({ representation: RGBA, bounds: { maxByteSpan: 640 * 480 * 4 }, storage: 'runtimePool' }).nominalRate(Rate.hz(30));
 *   }
 *   compute(): void {}
 * }
 * class Recorder extends Operator {
 *   frames!: InputPort;
 *   setup(spec: OperatorSpec): void {
 *     this.frames = spec.input('frames', RGBA);
 *   }
 *   compute(): void {}
 * }
 *
 * const graph = new Graph('capture');
 * const camera = graph.add(new Camera('camera')); // setup() runs here
 * const recorder = graph.add(new Recorder('recorder'));
 * graph.addFlow(camera.frames, recorder.frames, { queueDepth: 4, dropPolicy: 'dropOldest' });
 * const plan = unwrap(compile(graph));
 * console.log(`${graph.operators.length} operators; edge ${plan.edges[0]?.id} holds ${plan.edges[0]?.queueDepth} entries`);
 * ```
 */
export class Graph {
  readonly #operators: Operator[] = [];
  readonly #specs = new Map<Operator, OperatorSpec>();
  readonly #flows: GraphFlow[] = [];
  readonly #publications: TopicPublication[] = [];
  readonly #subscriptions: TopicSubscription[] = [];

  /** @throws HsError `InvalidArgument` when `name` is not a valid authoring name. */
  constructor(
    /** Graph name (letters, digits, `_`, `-`). */
    readonly name: string,
  ) {
    assertAuthoringName('graph', name);
  }

  /**
   * Adds `op` and calls `op.setup(spec)` at once; returns `op`. When `setup()` throws, the graph is
   * unchanged and the error propagates.
   * @throws HsError `InvalidArgument` when `op` is not an `Operator` or already belongs to a graph.
   */
  add<T extends Operator>(op: T): T {
    if (!(op instanceof Operator)) {
      throw new HsError(ErrorCode.InvalidArgument, `graph '${this.name}': add() takes an Operator instance`);
    }
    const owner = graphOfOperator.get(op);
    if (owner !== undefined) {
      throw new HsError(
        ErrorCode.InvalidArgument,
        `graph '${this.name}': operator '${op.name}' was already added to graph '${owner.name}'; create a new instance`,
      );
    }
    graphOfOperator.set(op, this);
    const window = new DeclarationWindow(op.name);
    const spec = new OperatorSpec(op, window);
    try {
      op.setup(spec);
    } catch (error) {
      graphOfOperator.delete(op);
      throw error;
    } finally {
      window.close();
    }
    this.#operators.push(op);
    this.#specs.set(op, spec);
    return op;
  }

  /**
   * Connects `output` to `input`. Each input takes at most one flow (`INPUT_FAN_IN` at compile); an
   * output may feed several inputs (a fork).
   * @throws HsError `InvalidArgument` when the ports are not an `OutputPort` then an `InputPort`, a
   * port belongs to an operator that is not in this graph, `options.dropPolicy` is not an `EdgeDropPolicy`,
   * or the producer's declared memory kind, dtype or rank conflicts with what the consumer requires
   * (`PHYSICAL_TENSOR_LAYOUT_MISMATCH` in the message; a parameter-selected memory kind is checked at compile).
   * Spec: "Current limitations" (conflicting declarations are rejected while authoring).
   */
  addFlow(output: OutputPort, input: InputPort, options?: FlowOptions): void {
    if (!(output instanceof OutputPort) || !(input instanceof InputPort)) {
      throw new HsError(
        ErrorCode.InvalidArgument,
        `graph '${this.name}': addFlow(output, input) takes an OutputPort then an InputPort ` +
          `(got ${describePort(output)} and ${describePort(input)}); a flow runs from a producer's output to a consumer's input`,
      );
    }
    this.#assertMember(output);
    this.#assertMember(input);
    const dropPolicy = options?.dropPolicy ?? 'block';
    if (!DROP_POLICIES.includes(dropPolicy)) {
      throw new HsError(
        ErrorCode.InvalidArgument,
        `graph '${this.name}': flow ${output.key}->${input.key}: dropPolicy ${String(dropPolicy)} is not one of ${DROP_POLICIES.join(', ')}`,
      );
    }
    const declared = output.tensor?.representation;
    const conflicts = declared === undefined ? [] : layoutConflicts(declared, input.requirements);
    if (conflicts.length > 0) {
      throw new HsError(
        ErrorCode.InvalidArgument,
        `graph '${this.name}': flow ${output.key}->${input.key}: PHYSICAL_TENSOR_LAYOUT_MISMATCH: the producer declares a layout the consumer ` +
          `does not accept (${conflicts.join('; ')}); change one of the two declarations (hs inserts no conversions)`,
      );
    }
    this.#flows.push(Object.freeze({ output, input, queueDepth: options?.queueDepth, dropPolicy }));
  }

  /**
   * Exports `output` to the external topic `topic`: every tensor the output emits is also published to
   * the subscribers attached in other processes (the output may feed local flows too). The output must
   * declare its tensors with bounds (`producesTensor()`); its pool becomes a boundary pool in shared
   * memory (POSIX shm for host and pinnedHost, one CUDA IPC allocation for cudaDevice), and a
   * pass-through output gets a boundary pool its tensors are copied into. Placement, memory kind and
   * option checks are reported by `compile()` (`TOPIC_*`, `QUEUE_DEPTH_INVALID`, `DEVICE_BINDING_REQUIRED`).
   * Spec: "Crossing process boundaries: the generation fence", "Current limitations".
   * @throws HsError `InvalidArgument` when `output` is not an `OutputPort` of an operator in this graph,
   * `topic` is not a valid topic name (see `assertTopicName`), or `options` is not an object.
   */
  publish(output: OutputPort, topic: string, options?: TopicPublishOptions): void {
    const where = `graph '${this.name}': publish(${describePort(output)}, ${JSON.stringify(topic)})`;
    if (!(output instanceof OutputPort)) throw new HsError(ErrorCode.InvalidArgument, `${where} takes an OutputPort first`);
    this.#assertMember(output);
    assertTopicName(where, topic);
    if (options !== undefined && (typeof options !== 'object' || options === null)) throw new HsError(ErrorCode.InvalidArgument, `${where}: options must be an object`);
    this.#publications.push(Object.freeze({ topic, output, subscriberQueueDepth: options?.subscriberQueueDepth, maxSubscribers: options?.maxSubscribers, pinnedHostWriter: options?.pinnedHostWriter }));
  }

  /**
   * Imports the external topic `topic` into `input`: the input receives the tensors another process
   * publishes there, ordered exactly like a local flow (a device tensor arrives after the producer's
   * generation fence on this operator's stream; a host-written one needs no wait). The input must
   * require a memory kind (its import representation); cudaDevice and pinnedHost imports need
   * `deployment.bindTopicDevice[topic]`. An input takes one source: a subscription or one flow.
   * `options.maxByteSpan` is the topic's byte bound (the imported external-topic bound): an
   * `inputMaxByteSpan(input)` derivation reads it, and the run refuses a larger imported tensor.
   * Spec: "Crossing process boundaries: the generation fence", "Pinned-host readiness follows the writer",
   * "Derive slot bytes from deployment parameters".
   * @throws HsError `InvalidArgument` when `input` is not an `InputPort` of an operator in this graph,
   * `topic` is not a valid topic name, or `options` is not an object.
   */
  subscribe(topic: string, input: InputPort, options?: TopicSubscribeOptions): void {
    const where = `graph '${this.name}': subscribe(${JSON.stringify(topic)}, ${describePort(input)})`;
    if (!(input instanceof InputPort)) throw new HsError(ErrorCode.InvalidArgument, `${where} takes an InputPort second`);
    this.#assertMember(input);
    assertTopicName(where, topic);
    if (options !== undefined && (typeof options !== 'object' || options === null)) throw new HsError(ErrorCode.InvalidArgument, `${where}: options must be an object`);
    this.#subscriptions.push(Object.freeze({ topic, input, queueDepth: options?.queueDepth, maxByteSpan: options?.maxByteSpan }));
  }

  /** `publish()` declarations in the order they were made. */
  get publications(): readonly TopicPublication[] {
    return this.#publications;
  }

  /** `subscribe()` declarations in the order they were made. */
  get subscriptions(): readonly TopicSubscription[] {
    return this.#subscriptions;
  }

  #assertMember(port: InputPort | OutputPort): void {
    if (!this.#specs.has(port.operator)) {
      throw new HsError(
        ErrorCode.InvalidArgument,
        `graph '${this.name}': port ${port.key} belongs to an operator that is not in this graph; add the operator with graph.add() first`,
      );
    }
  }

  /** Operators in the order they were added. */
  get operators(): readonly Operator[] {
    return this.#operators;
  }

  /** Flows in the order they were added. */
  get flows(): readonly GraphFlow[] {
    return this.#flows;
  }

  /**
   * The declarations `op.setup()` made.
   * @throws HsError `NotFound` when `op` is not in this graph.
   */
  specOf(op: Operator): OperatorSpec {
    const spec = this.#specs.get(op);
    if (spec === undefined) throw new HsError(ErrorCode.NotFound, `graph '${this.name}': operator '${op.name}' is not in this graph`);
    return spec;
  }
}

function describePort(port: unknown): string {
  if (port instanceof InputPort) return `input ${port.key}`;
  if (port instanceof OutputPort) return `output ${port.key}`;
  return typeof port === 'object' && port !== null ? 'a non-port object' : String(port);
}
