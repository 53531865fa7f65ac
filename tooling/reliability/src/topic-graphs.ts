import { type ExecutionContext, type ExecutionPlan, Graph, type InputPort, Operator, type OperatorSpec, type OutputPort, compile } from '@hs/compiler';
import { IpcBoundaries } from '@hs/ipc';
import { RunSession } from '@hs/runtime';
import { type Backend, Device, MemoryKind, OK_VOID, type Result, err, ErrorCode } from '@hs/streams';
import { DType } from '@hs/tensor';

/** Bytes of one frame the cross-process graphs send (4 KiB). */
export const TOPIC_FRAME_BYTES = 4096;

/** The byte frame `frame` holds at `index`: two halves filled with values derived from the frame number. */
export function topicFrameByte(frame: number, index: number): number {
  return index < TOPIC_FRAME_BYTES / 2 ? (frame * 7 + 1) & 0xff : (frame * 13 + 5) & 0xff;
}

/** Which memory the topic carries: host (POSIX shm, host writer) or cudaDevice (CUDA IPC, generation fence). */
export type TopicMemory = 'host' | 'cudaDevice';

/**
 * Producer: writes frame i's two halves (host writer: through the host view; device: two memsets on its
 * stream, a stream writer whose commit records the generation fence) and finishes after `frames`.
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
      representation: { memoryKind: this.memory === 'host' ? MemoryKind.Host : MemoryKind.CudaDevice, dtype: DType.uint8, rank: 1 },
      bounds: { maxByteSpan: TOPIC_FRAME_BYTES },
      storage: 'runtimePool',
    });
  }

  compute(ctx: ExecutionContext): Result<void> {
    const loan = ctx.allocateTensor(this.out, { shape: [TOPIC_FRAME_BYTES], dtype: DType.uint8 });
    if (!loan.ok) return loan;
    const device = this.memory === 'cudaDevice';
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
  ) {
    super('sink');
  }

  setup(spec: OperatorSpec): void {
    this.in = spec.input('frames', { memoryKind: this.memory === 'host' ? MemoryKind.Host : MemoryKind.CudaDevice, dtype: DType.uint8, rank: 1 });
  }

  async compute(ctx: ExecutionContext): Promise<Result<void>> {
    const tensor = ctx.receive(this.in);
    if (tensor === undefined) return err(ErrorCode.InvalidState, 'sink activated without a frame');
    let bytes: Uint8Array;
    if (this.memory === 'host') {
      const waited = await tensor.synchronizeForHost();
      if (!waited.ok) return waited;
      const view = tensor.hostView();
      if (!view.ok) return view;
      bytes = view.value;
    } else {
      const copied = await tensor.copyToHost(this.host, ctx.cudaStream());
      if (!copied.ok) return copied;
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
    ? { deployment: { bindOperatorDevice: { source: Device.cuda(0) } } }
    : { deployment: { bindTopicDevice: { [topic]: Device.cuda(0) } } };
}

/** The producer graph: `source.frames` published to `topic`. */
export function topicProducerPlan(topic: string, frames: number, memory: TopicMemory): { plan: ExecutionPlan; source: PatternSource } {
  const graph = new Graph('topic-producer');
  const source = graph.add(new PatternSource(frames, memory));
  graph.publish(source.out, topic, { subscriberQueueDepth: 4 });
  const plan = compile(graph, deployment(memory, topic, 'publish'));
  if (!plan.ok) throw plan.error;
  return { plan: plan.value, source };
}

/** The consumer graph: `sink.frames` subscribed to `topic`. */
export function topicConsumerPlan(topic: string, memory: TopicMemory, onFrame?: (received: number) => void): { plan: ExecutionPlan; sink: PatternSink } {
  const graph = new Graph('topic-consumer');
  const sink = graph.add(new PatternSink(memory, onFrame));
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

/** Runs the producer graph until `frames` were sent and every slot came back from the subscriber(s). */
export async function runTopicProducer(options: TopicRunOptions & { readonly frames: number; readonly awaitSubscribers: number }): Promise<TopicRunReport> {
  const { plan, source } = topicProducerPlan(options.topic, options.frames, options.memory);
  const prepared = await IpcBoundaries.prepare(plan, {
    backend: options.backend,
    awaitSubscribers: options.awaitSubscribers,
    ...(options.runtimeDirectory === undefined ? {} : { runtimeDirectory: options.runtimeDirectory }),
  });
  if (!prepared.ok) return failed(prepared.error);
  const session = RunSession.create(plan, { backend: options.backend, boundaries: prepared.value });
  if (!session.ok) {
    await prepared.value.dispose();
    return failed(session.error);
  }
  const started = performance.now();
  const run = await session.value.run();
  const elapsedMs = performance.now() - started;
  const pool = run.ok ? run.value.pools.find((p) => p.id === plan.pools[0]?.id) : undefined;
  session.value.dispose();
  return {
    ok: run.ok,
    error: run.ok ? null : `${run.error.code}: ${run.error.message}`,
    frames: source.sent,
    badBytes: 0,
    slotsOut: pool?.outstanding ?? -1,
    elapsedMs,
  };
}

/** Runs the consumer graph until its publisher says goodbye (or fails); `onFrame` sees the count after each frame. */
export async function runTopicConsumer(options: TopicRunOptions & { readonly onFrame?: (received: number) => void }): Promise<TopicRunReport> {
  const { plan, sink } = topicConsumerPlan(options.topic, options.memory, options.onFrame);
  const prepared = await IpcBoundaries.prepare(plan, {
    backend: options.backend,
    connectTimeoutMs: 30_000,
    ...(options.runtimeDirectory === undefined ? {} : { runtimeDirectory: options.runtimeDirectory }),
  });
  if (!prepared.ok) return failed(prepared.error);
  const session = RunSession.create(plan, { backend: options.backend, boundaries: prepared.value });
  if (!session.ok) return failed(session.error);
  const started = performance.now();
  const run = await session.value.run();
  const elapsedMs = performance.now() - started;
  session.value.dispose();
  return { ok: run.ok, error: run.ok ? null : `${run.error.code}: ${run.error.message}`, frames: sink.received, badBytes: sink.badBytes, slotsOut: 0, elapsedMs };
}

function failed(error: { code: string; message: string }): TopicRunReport {
  return { ok: false, error: `${error.code}: ${error.message}`, frames: 0, badBytes: 0, slotsOut: -1, elapsedMs: 0 };
}
