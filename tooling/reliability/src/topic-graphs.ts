import { type ExecutionContext, type ExecutionPlan, Graph, type InputPort, Operator, type OperatorSpec, type OutputPort, compile } from '@hs/compiler';
import { IpcBoundaries } from '@hs/ipc';
import { RunSession, type RunMetrics, type TopicMetrics } from '@hs/runtime';
import { type Backend, Device, type DeviceMemory, MemoryKind, OK_VOID, type MemoryRange, type Result, type Stream, err, ErrorCode, HsError } from '@hs/streams';
import { DType, Tensor } from '@hs/tensor';
import { outcomeOf } from './run-outcome.js';

/** Bytes of one frame the cross-process graphs send (4 KiB). */
export const TOPIC_FRAME_BYTES = 4096;

/** The byte frame `frame` holds at `index`: two halves filled with values derived from the frame number. */
export function topicFrameByte(frame: number, index: number): number {
  return index < TOPIC_FRAME_BYTES / 2 ? (frame * 7 + 1) & 0xff : (frame * 13 + 5) & 0xff;
}

/** Which memory the topic carries: host (POSIX shm, host writer) or cudaDevice (CUDA IPC, generation fence). */
/**
 * The boundary's memory: `host` (host writer, no fence), `pinnedHost` (written on the producer's CUDA
 * stream, `pinnedHostWriter: 'cudaStream'`: each commit records a generation fence in the shared segment,
 * the importer waits for it on its own stream) or `cudaDevice` (CUDA IPC, fenced).
 */
export type TopicMemory = 'host' | 'pinnedHost' | 'cudaDevice';

/** The memory kind of `memory`'s tensors. */
const KIND_OF: Readonly<Record<TopicMemory, MemoryKind>> = { host: MemoryKind.Host, pinnedHost: MemoryKind.PinnedHost, cudaDevice: MemoryKind.CudaDevice };

/**
 * Producer: writes frame i's two halves (host writer: through the host view; pinnedHost and device: two
 * memsets on its stream, a stream writer whose commit records the generation fence) and finishes after
 * `frames`.
 */
class PatternSource extends Operator {
  out!: OutputPort;
  sent = 0;
  private readonly halves = new Uint8Array(TOPIC_FRAME_BYTES);

  constructor(
    readonly frames: number,
    readonly memory: TopicMemory,
  ) {
    super('source');
  }

  setup(spec: OperatorSpec): void {
    this.out = spec.output('frames').producesTensor({
      representation: { memoryKind: KIND_OF[this.memory], dtype: DType.uint8, rank: 1 },
      bounds: { maxByteSpan: TOPIC_FRAME_BYTES },
      storage: 'runtimePool',
    });
  }

  compute(ctx: ExecutionContext): Result<void> {
    const loan = ctx.allocateTensor(this.out, { shape: [TOPIC_FRAME_BYTES], dtype: DType.uint8 });
    if (!loan.ok) return loan;
    const device = this.memory !== 'host';
    const guard = loan.value.write(device ? ctx.cudaStream() : null);
    if (!guard.ok) return guard;
    const frame = this.sent;
    if (device) {
      const half = TOPIC_FRAME_BYTES / 2;
      const range = guard.value.range;
      for (const [offset, value] of [[0, topicFrameByte(frame, 0)], [half, topicFrameByte(frame, half)]] as const) {
        const filled = ctx.backend.memsetAsync(ctx.cudaStream(), { ...range, byteOffset: range.byteOffset + offset, byteLength: half }, value);
        if (!filled.ok) return filled;
      }
    } else {
      const view = guard.value.tensor.mutableHostView();
      if (!view.ok) return view;
      const bytes = this.halves;
      bytes.fill(topicFrameByte(frame, 0), 0, TOPIC_FRAME_BYTES / 2);
      bytes.fill(topicFrameByte(frame, TOPIC_FRAME_BYTES / 2), TOPIC_FRAME_BYTES / 2);
      view.value.set(bytes);
    }
    const committed = guard.value.commit();
    if (!committed.ok) return committed;
    this.sent += 1;
    if (this.sent === this.frames) ctx.finish();
    return ctx.emit(this.out, loan.value);
  }
}

/** The backend calls one `emitTensor()` of a foreign tensor made, as `ForeignPatternSource` counts them. */
export interface ForeignEmitCosts {
  /** Emits counted. */
  readonly emits: number;
  /** Emits that enqueued exactly one copy, device memory to device memory on the tensor's device. */
  readonly oneSameDeviceCopy: number;
  /** Copies enqueued by the emits in all (one per emit is the contract). */
  readonly copies: number;
  /** Host waits and host copies the emits made (`synchronizeStream`, `synchronizeEvent`, `copyToHostAsync`, `copyFromHostAsync`); 0 is the contract. */
  readonly hostCalls: number;
}

/** Backend methods that wait on the host or stage bytes through it: a device-contract emit calls none. */
const HOST_CALLS = ['synchronizeStream', 'synchronizeEvent', 'copyToHostAsync', 'copyFromHostAsync'] as const;

/**
 * Producer of foreign device tensors through a pass-through cudaDevice output: each frame's pattern is
 * written by two memsets on the operator's stream into one buffer the operator allocated itself (not a
 * pool slot), imported with `Tensor.import` and given its readiness with `setReadinessStream()`; the
 * device boundary copies it into a slot on the same stream and fences it. While `emitTensor()` runs, the
 * backend's copy and host-wait methods are counted (`costs`).
 */
class ForeignPatternSource extends Operator {
  out!: OutputPort;
  sent = 0;
  #memory: DeviceMemory | null = null;
  #tensor: Tensor | null = null;
  #counting = false;
  #emitCopies: { dst: MemoryRange; src: MemoryRange }[] = [];
  #hostCalls = 0;
  #costs = { emits: 0, oneSameDeviceCopy: 0, copies: 0, hostCalls: 0 };
  readonly #restore: (() => void)[] = [];

  constructor(
    readonly frames: number,
    private readonly backend: Backend,
  ) {
    super('source');
  }

  setup(spec: OperatorSpec): void {
    this.out = spec.output('frames').producesTensor({
      representation: { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 1 },
      bounds: { maxByteSpan: TOPIC_FRAME_BYTES },
      storage: 'passThrough',
    });
    spec.requireCudaStream();
  }

  /** Allocates the foreign buffer and starts counting the backend's copies and host waits (during emits only). */
  override start(): Result<void> {
    const memory = this.backend.allocate({ kind: MemoryKind.CudaDevice, device: Device.cuda(0), byteSize: TOPIC_FRAME_BYTES, label: 'foreign frame' });
    if (!memory.ok) return memory;
    const tensor = Tensor.import({ backend: this.backend, memory: memory.value, shape: [TOPIC_FRAME_BYTES], dtype: DType.uint8, name: 'foreign frame' });
    if (!tensor.ok) {
      this.backend.free(memory.value);
      return tensor;
    }
    this.#memory = memory.value;
    this.#tensor = tensor.value;
    const backend = this.backend as unknown as Record<string, (...args: unknown[]) => unknown>;
    const watch = (name: string, count: (args: unknown[]) => void): void => {
      const original = backend[name] as (...args: unknown[]) => unknown;
      backend[name] = (...args: unknown[]) => {
        if (this.#counting) count(args);
        return original.apply(this.backend, args);
      };
      this.#restore.push(() => delete backend[name]);
    };
    watch('memcpyAsync', (args) => this.#emitCopies.push({ dst: args[1] as MemoryRange, src: args[2] as MemoryRange }));
    for (const name of HOST_CALLS) watch(name, () => this.#hostCalls++);
    return OK_VOID;
  }

  compute(ctx: ExecutionContext): Result<void> {
    const tensor = this.#tensor as Tensor;
    const stream: Stream = ctx.cudaStream();
    const range = tensor.data();
    const half = TOPIC_FRAME_BYTES / 2;
    for (const [offset, value] of [[0, topicFrameByte(this.sent, 0)], [half, topicFrameByte(this.sent, half)]] as const) {
      const filled = ctx.backend.memsetAsync(stream, { ...range, byteOffset: range.byteOffset + offset, byteLength: half }, value);
      if (!filled.ok) return filled;
    }
    const ready = tensor.setReadinessStream(stream);
    if (!ready.ok) return ready;
    this.#emitCopies.length = 0;
    this.#hostCalls = 0;
    this.#counting = true;
    const emitted = ctx.emitTensor(this.out, tensor);
    this.#counting = false;
    if (!emitted.ok) return emitted;
    const copies = this.#emitCopies;
    const sameDevice = copies.length === 1 && isDeviceRangeOn(copies[0]!.src, tensor) && isDeviceRangeOn(copies[0]!.dst, tensor) && copies[0]!.dst.memory !== copies[0]!.src.memory;
    const c = this.#costs;
    this.#costs = { emits: c.emits + 1, oneSameDeviceCopy: c.oneSameDeviceCopy + (sameDevice ? 1 : 0), copies: c.copies + copies.length, hostCalls: c.hostCalls + this.#hostCalls };
    this.sent += 1;
    if (this.sent === this.frames) ctx.finish();
    return OK_VOID;
  }

  /** Stops counting (the backend's own methods again). */
  override stop(): Result<void> {
    for (const restore of this.#restore.splice(0)) restore();
    return OK_VOID;
  }

  /** What the emits cost so far. */
  get costs(): ForeignEmitCosts {
    return this.#costs;
  }

  /** Frees the foreign buffer; call once the run ended (its streams were synchronized). */
  release(): void {
    this.#tensor?.dispose();
    if (this.#memory !== null) this.backend.free(this.#memory);
    this.#tensor = null;
    this.#memory = null;
  }
}

/** True when `range` is device memory on `tensor`'s device. */
function isDeviceRangeOn(range: MemoryRange, tensor: Tensor): boolean {
  return range.memory.kind === MemoryKind.CudaDevice && range.memory.device === tensor.device;
}

/**
 * Consumer: checks every byte of every frame against `topicFrameByte` (a host reader after
 * `synchronizeForHost()`, which returns at once for the host writer; a device import copied to the host
 * on its stream, after the generation fence) and counts frames, mismatching bytes and order breaks.
 */
class PatternSink extends Operator {
  in!: InputPort;
  received = 0;
  badBytes = 0;
  private readonly host = new Uint8Array(TOPIC_FRAME_BYTES);

  constructor(
    readonly memory: TopicMemory,
    private readonly onFrame: ((received: number) => void) | undefined,
    /** After this many frames the sink stops in `compute()` for good, holding every slot it has or gets. */
    private readonly stallAfter: number | undefined,
    private readonly onStall: (() => void) | undefined,
  ) {
    super('sink');
  }

  setup(spec: OperatorSpec): void {
    this.in = spec.input('frames', { memoryKind: KIND_OF[this.memory], dtype: DType.uint8, rank: 1 });
  }

  async compute(ctx: ExecutionContext): Promise<Result<void>> {
    const tensor = ctx.receive(this.in);
    if (tensor === undefined) return err(ErrorCode.InvalidState, 'sink activated without a frame');
    if (this.received === this.stallAfter) {
      this.onStall?.();
      // A hung consumer: it never returns, so nothing it received is released (its process is killed).
      return new Promise<Result<void>>(() => undefined);
    }
    let bytes: Uint8Array;
    if (this.memory === 'host') {
      await tensor.synchronizeForHost();
      const view = tensor.hostView();
      if (!view.ok) return view;
      bytes = view.value;
    } else {
      await tensor.copyToHost(this.host, ctx.cudaStream());
      bytes = this.host;
    }
    const frame = this.received;
    for (let i = 0; i < TOPIC_FRAME_BYTES; i++) if (bytes[i] !== topicFrameByte(frame, i)) this.badBytes += 1;
    this.received += 1;
    this.onFrame?.(this.received);
    return OK_VOID;
  }
}

/** Compile options placing the device variant on cuda:0 (endpoint-name binding for the import). */
function deployment(memory: TopicMemory, topic: string, side: 'publish' | 'subscribe') {
  if (memory === 'host') return {};
  return side === 'publish'
    ? { deployment: { bindOperatorDevice: { source: Device.cuda(0) }, bindTensorOutputDevice: memory === 'cudaDevice' ? { 'source.frames': Device.cuda(0) } : ({} as Record<string, Device>) } }
    : { deployment: { bindTopicDevice: { [topic]: Device.cuda(0) } } };
}

/** The producer graph: `source.frames` published to `topic`. */
export function topicProducerPlan(topic: string, frames: number, memory: TopicMemory): { plan: ExecutionPlan; source: PatternSource } {
  const graph = new Graph('topic-producer');
  const source = graph.add(new PatternSource(frames, memory));
  graph.publish(source.out, topic, { subscriberQueueDepth: 4, ...(memory === 'pinnedHost' ? { pinnedHostWriter: 'cudaStream' as const } : {}) });
  const plan = compile(graph, deployment(memory, topic, 'publish'));
  if (!plan.ok) throw plan.error;
  return { plan: plan.value, source };
}

/**
 * The producer graph of foreign device tensors: `source.frames`, a pass-through cudaDevice output on
 * cuda:0, published to `topic` (its boundary pool `boundary:<topic>` is a copy-staged CUDA IPC pool).
 */
export function foreignTopicProducerPlan(topic: string, frames: number, backend: Backend): { plan: ExecutionPlan; source: ForeignPatternSource } {
  const graph = new Graph('foreign-topic-producer');
  const source = graph.add(new ForeignPatternSource(frames, backend));
  graph.publish(source.out, topic, { subscriberQueueDepth: 4 });
  const plan = compile(graph, deployment('cudaDevice', topic, 'publish'));
  if (!plan.ok) throw plan.error;
  return { plan: plan.value, source };
}

/** What a consumer graph does besides checking frames. */
export interface TopicConsumerHooks {
  /** Sees the frame count after each frame. */
  readonly onFrame?: (received: number) => void;
  /** After this many frames the sink hangs in `compute()` (holding every slot it has or gets) and `onStall` runs once. */
  readonly stallAfter?: number;
  readonly onStall?: () => void;
}

/** The consumer graph: `sink.frames` subscribed to `topic`. */
export function topicConsumerPlan(topic: string, memory: TopicMemory, hooks: TopicConsumerHooks = {}): { plan: ExecutionPlan; sink: PatternSink } {
  const graph = new Graph('topic-consumer');
  const sink = graph.add(new PatternSink(memory, hooks.onFrame, hooks.stallAfter, hooks.onStall));
  graph.subscribe(topic, sink.in, { queueDepth: 2 });
  const plan = compile(graph, deployment(memory, topic, 'subscribe'));
  if (!plan.ok) throw plan.error;
  return { plan: plan.value, sink };
}

/** What one side of a cross-process run reports. */
export interface TopicRunReport {
  readonly ok: boolean;
  /** The run's error (code and message) when it failed. */
  readonly error: string | null;
  /** Frames sent (producer) or received (consumer). */
  readonly frames: number;
  /** Consumer: bytes that differed from the pattern. */
  readonly badBytes: number;
  /** Producer: boundary-pool slots still out after the run (occupancy); consumer: 0. */
  readonly slotsOut: number;
  readonly elapsedMs: number;
}

/** Options of the two sides. */
export interface TopicRunOptions {
  readonly backend: Backend;
  readonly topic: string;
  readonly memory: TopicMemory;
  /** Topic socket directory (tests use a private one). */
  readonly runtimeDirectory?: string;
}

/** Options of the producer side. */
export interface TopicProducerOptions extends TopicRunOptions {
  readonly frames: number;
  /** Subscribers the run waits for before the source starts. */
  readonly awaitSubscribers: number;
  /**
   * `pool` (default): the source writes boundary-pool slots in place; `foreign`: it emits foreign device
   * tensors through a pass-through output, copied into the boundary pool (cudaDevice only).
   */
  readonly source?: 'pool' | 'foreign';
  /** Longest a subscriber may hold a slot before the publisher drops it, in ms (default IpcBoundaries' 5000). */
  readonly leaseTimeoutMs?: number;
  /** Longest a connection may go without ATTACH before the publisher drops it, in ms (default IpcBoundaries' 2000). */
  readonly attachTimeoutMs?: number;
  /** Sees the session's metrics every `metricsIntervalMs` ms (default 1000) and once when the run ended. */
  readonly onMetrics?: (metrics: RunMetrics) => void;
  readonly metricsIntervalMs?: number;
  /** Aborting stops the run early (it drains and every slot returns), as `RunSession.run`'s signal does. */
  readonly signal?: AbortSignal;
}

/** What the producer side reports. */
export interface TopicProducerReport extends TopicRunReport {
  /** The published topic's figures when the run ended (subscribers, dropped subscribers, the last drop). */
  readonly topic: TopicMetrics | null;
  /** With `source: 'foreign'`: what its emits cost on the backend; otherwise `null`. */
  readonly foreignEmits: ForeignEmitCosts | null;
}

/** Runs the producer graph until `frames` were sent and every slot came back from the subscriber(s). */
export async function runTopicProducer(options: TopicProducerOptions): Promise<TopicProducerReport> {
  const foreign = options.source === 'foreign';
  if (foreign && options.memory !== 'cudaDevice') return { ...failed(new HsError(ErrorCode.InvalidArgument, 'a foreign source emits device tensors: use memory cudaDevice')), topic: null, foreignEmits: null };
  const made = foreign ? foreignTopicProducerPlan(options.topic, options.frames, options.backend) : topicProducerPlan(options.topic, options.frames, options.memory);
  const { plan, source } = made;
  const prepared = await outcomeOf(IpcBoundaries.prepare(plan, {
    backend: options.backend,
    awaitSubscribers: options.awaitSubscribers,
    ...(options.leaseTimeoutMs === undefined ? {} : { leaseTimeoutMs: options.leaseTimeoutMs }),
    ...(options.attachTimeoutMs === undefined ? {} : { attachTimeoutMs: options.attachTimeoutMs }),
    ...(options.runtimeDirectory === undefined ? {} : { runtimeDirectory: options.runtimeDirectory }),
  }));
  if (!prepared.ok) return { ...failed(prepared.error), topic: null, foreignEmits: null };
  const session = RunSession.create(plan, { backend: options.backend, boundaries: prepared.value, ...(options.metricsIntervalMs === undefined ? {} : { metricsIntervalMs: options.metricsIntervalMs }) });
  if (!session.ok) {
    await prepared.value.dispose();
    return { ...failed(session.error), topic: null, foreignEmits: null };
  }
  if (options.onMetrics !== undefined) session.value.on('metrics', options.onMetrics);
  const started = performance.now();
  const run = await outcomeOf(session.value.run(options.signal === undefined ? {} : { signal: options.signal }));
  const elapsedMs = performance.now() - started;
  const pool = run.ok ? run.value.pools.find((p) => p.id === plan.pools[0]?.id) : undefined;
  const topic = session.value.metrics().topics[0] ?? null;
  session.value.dispose();
  if (source instanceof ForeignPatternSource) source.release();
  return {
    ok: run.ok,
    error: run.ok ? null : run.error.message,
    frames: source.sent,
    badBytes: 0,
    slotsOut: pool?.outstanding ?? -1,
    elapsedMs,
    topic,
    foreignEmits: source instanceof ForeignPatternSource ? source.costs : null,
  };
}

/** Runs the consumer graph until its publisher says goodbye (or fails); `hooks` see each frame or make it hang. */
export async function runTopicConsumer(options: TopicRunOptions & TopicConsumerHooks): Promise<TopicRunReport> {
  const { plan, sink } = topicConsumerPlan(options.topic, options.memory, options);
  const prepared = await outcomeOf(
    IpcBoundaries.prepare(plan, {
      backend: options.backend,
      connectTimeoutMs: 30_000,
      ...(options.runtimeDirectory === undefined ? {} : { runtimeDirectory: options.runtimeDirectory }),
    }),
  );
  if (!prepared.ok) return failed(prepared.error);
  const session = RunSession.create(plan, { backend: options.backend, boundaries: prepared.value });
  if (!session.ok) return failed(session.error);
  const started = performance.now();
  const run = await outcomeOf(session.value.run());
  const elapsedMs = performance.now() - started;
  session.value.dispose();
  return { ok: run.ok, error: run.ok ? null : run.error.message, frames: sink.received, badBytes: sink.badBytes, slotsOut: 0, elapsedMs };
}

/** The report of a side that could not run; `message` is the error's `${code}: ${detail}`. */
function failed(error: { message: string }): TopicRunReport {
  return { ok: false, error: error.message, frames: 0, badBytes: 0, slotsOut: -1, elapsedMs: 0 };
}
