import type { Readable } from 'node:stream';
import { type ExecutionContext, Operator, type OperatorSpec, type OutputPort } from '@hs/compiler';
import { ErrorCode, HsError, MemoryKind, OK_VOID, type Result, err } from '@hs/streams';
import { DType } from '@hs/tensor';

/** Options of `ReadableSource`. */
export interface ReadableSourceOptions {
  /** Largest frame in bytes (the output's slot bound; a positive integer). */
  readonly maxFrameBytes: number;
  /** Host-accessible memory kind of the output (default `pinnedHost`). */
  readonly memoryKind?: MemoryKind.PinnedHost | MemoryKind.Host;
}

/**
 * A source operator fed by an object-mode Node `Readable` whose chunks are frames (`Uint8Array`s of at
 * most `maxFrameBytes` bytes). Each activation pulls one chunk with `read()` (never waiting) and
 * publishes it on output `frames` as a rank-1 uint8 tensor written on the host. Backpressure is carried
 * through: the session activates the source only when the graph has room, so the `Readable` stops
 * pulling from upstream once its own `highWaterMark` is buffered. The source finishes when the stream
 * ended. Errors (returned, ending the run): `InvalidState` for the stream's error, and for a stream
 * destroyed before it ended (a premature close: the frames it still had are lost); `InvalidArgument`
 * for a chunk that is not a `Uint8Array` or exceeds `maxFrameBytes`.
 * @example
 * ```ts
 * import { Readable } from 'node:stream';
 * import { Graph, compile } from '@hs/compiler';
 * import { ReadableSource, RunSession } from '@hs/runtime';
 *
 * async function* frames(): AsyncGenerator<Uint8Array> {
 *   for (let i = 0; i < 3; i++) yield new Uint8Array(128).fill(i); // e.g. chunks of a capture stream
 * }
 * const graph = new Graph('ingest');
 * graph.add(new ReadableSource('camera', Readable.from(frames()), { maxFrameBytes: 128 }));
 * const plan = compile(graph);
 * if (!plan.ok) throw plan.error;
 * const session = RunSession.create(plan.value, { backend: 'host' });
 * if (!session.ok) throw session.error;
 * const tap = session.value.tap('camera', 'frames');
 * if (!tap.ok) throw tap.error;
 * const running = session.value.run();
 * for await (const frame of tap.value) console.log(`frame: ${frame.shape} ${frame.dtype}`);
 * await running;
 * session.value.dispose();
 * ```
 */
export class ReadableSource extends Operator {
  /** The frames output. */
  frames!: OutputPort;
  private failure: unknown = null;
  private readonly maxFrameBytes: number;
  private readonly memoryKind: MemoryKind;

  /**
   * @throws HsError `InvalidArgument` when `readable` is not a Node `Readable` in object mode, `options`
   *   is missing, `maxFrameBytes` is not a positive integer, or `memoryKind` is not `pinnedHost`/`host`.
   */
  constructor(
    name: string,
    private readonly readable: Readable,
    options: ReadableSourceOptions,
  ) {
    super(name);
    const candidate = readable as Partial<Readable> | null | undefined;
    if (candidate === null || typeof candidate !== 'object' || typeof candidate.read !== 'function' || typeof candidate.on !== 'function') {
      throw new HsError(ErrorCode.InvalidArgument, `ReadableSource ${name}: the second argument must be a Node Readable in object mode`);
    }
    if (options === null || typeof options !== 'object') {
      throw new HsError(ErrorCode.InvalidArgument, `ReadableSource ${name}: options are required: new ReadableSource(name, readable, { maxFrameBytes })`);
    }
    if (readable.readableObjectMode !== true) {
      throw new HsError(ErrorCode.InvalidArgument, `ReadableSource ${name}: the Readable must be in object mode (one frame per chunk)`);
    }
    if (!Number.isSafeInteger(options.maxFrameBytes) || options.maxFrameBytes < 1) {
      throw new HsError(ErrorCode.InvalidArgument, `ReadableSource ${name}: maxFrameBytes ${String(options.maxFrameBytes)} is not a positive integer`);
    }
    const memoryKind = options.memoryKind ?? MemoryKind.PinnedHost;
    if (!HOST_WRITABLE_KINDS.includes(memoryKind)) {
      throw new HsError(
        ErrorCode.InvalidArgument,
        `ReadableSource ${name}: memoryKind ${String(memoryKind)} is not host-writable; use one of ${HOST_WRITABLE_KINDS.join(', ')}`,
      );
    }
    this.maxFrameBytes = options.maxFrameBytes;
    this.memoryKind = memoryKind;
    // Recorded and returned from the next activation instead of crashing the process.
    readable.on('error', (error: unknown) => (this.failure ??= error));
  }

  setup(spec: OperatorSpec): void {
    this.frames = spec.output('frames').producesTensor({
      representation: { memoryKind: this.memoryKind, dtype: DType.uint8, rank: 1 },
      bounds: { maxByteSpan: this.maxFrameBytes },
      storage: 'runtimePool',
    });
  }

  compute(ctx: ExecutionContext): Result<void> {
    if (this.failure !== null) return err(ErrorCode.InvalidState, `Readable failed: ${describe(this.failure)}`, this.failure);
    const chunk: unknown = this.readable.read();
    if (chunk === null) {
      if (this.readable.readableEnded) ctx.finish();
      else if (this.readable.destroyed) {
        return err(ErrorCode.InvalidState, `ReadableSource ${this.name}: the Readable was destroyed before it ended (premature close); frames it still held were lost`);
      }
      return OK_VOID; // nothing buffered yet: the session polls again
    }
    if (!(chunk instanceof Uint8Array) || chunk.byteLength > this.maxFrameBytes) {
      return err(
        ErrorCode.InvalidArgument,
        `Readable chunk is ${chunk instanceof Uint8Array ? `${chunk.byteLength} bytes, over maxFrameBytes ${this.maxFrameBytes}` : 'not a Uint8Array'}; push one frame per chunk`,
      );
    }
    const loan = ctx.allocateTensor(this.frames, { shape: [chunk.byteLength], dtype: DType.uint8 });
    if (!loan.ok) return loan;
    const guard = loan.value.write(null);
    if (!guard.ok) return guard;
    const view = guard.value.tensor.mutableHostView();
    if (!view.ok) return view;
    view.value.set(chunk);
    const committed = guard.value.commit();
    if (!committed.ok) return committed;
    return ctx.emit(this.frames, loan.value);
  }
}

/** The memory kinds the source can write with the host (the `memoryKind` option's domain). */
const HOST_WRITABLE_KINDS: readonly MemoryKind[] = [MemoryKind.PinnedHost, MemoryKind.Host];

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
