import { type ExecutionContext, type InputPort, Operator, type OperatorSpec, type OutputPort } from '@hs/compiler';
import { type Backend, type DeviceMemory, Device, ErrorCode, HsError, MemoryKind, type MemoryRange, OK_VOID, type Result, type Stream, err, ok } from '@hs/streams';
import { DType } from '@hs/tensor';
import type { TensorLoan } from '@hs/pool';

/** What a `DeviceCopy` moves: the tensors' element type, rank and largest byte span. */
export interface DeviceCopyOptions {
  /** Element type of the tensors (input and output). */
  readonly dtype: DType;
  /** Rank of the tensors (input and output). */
  readonly rank: number;
  /** Largest tensor in bytes: the output pool's slot bound and the staging buffer's size. */
  readonly maxByteSpan: number;
}

/**
 * The explicit copy between devices that hs never inserts on its own (spec "Current limitations": no
 * cross-device copy). Place it on an edge whose producer is on another GPU: its input `input` is declared
 * `{ crossDevice: true }`, so the compiler lets that edge cross devices, and its output `output` is a
 * runtime pool in cudaDevice memory on the operator's own device (bind it with
 * `deployment.bindTensorOutputDevice['<name>.output']`; the operator's device follows from it).
 *
 * Each activation copies the received tensor onto its own device, on its compute stream, after the
 * producer's readiness event (the runtime makes the stream wait on it, on the producer's device) through
 * the backend's `peerCopy` capability: a peer copy where the devices allow one, else staged through a
 * pinned host buffer of `maxByteSpan` bytes made the first time it is needed (both halves of a staged copy
 * run on the operator's stream, so the buffer's reuse is stream-ordered too). It emits the copy at once
 * (readiness is an event on its stream) and returns: nothing waits on the host. The input's slot goes back
 * to the producer's pool in stream order, after the copy read it: the runtime gives the producer's pool
 * release events on this operator's device (`TensorPoolSpec.releaseDevices`, from the `{ crossDevice: true }`
 * input) and records one on this operator's stream when the input is released. A full output pool drops the
 * frame (counted as an exhaustion); a full `reject` edge downstream keeps the copy for a retry activation
 * (`ctx.retainPending`), which emits it again. Errors (`compute()`'s `Result`, failing the run):
 * `NotSupported` for a backend without `peerCopy`; `InvalidArgument` for a non-contiguous tensor or one larger
 * than `maxByteSpan`; the backend's errors.
 * @example
 * ```ts
 * import { type ExecutionContext, Graph, type InputPort, Operator, type OperatorSpec, type OutputPort, compile } from '@hs/compiler';
 * import { DeviceCopy, RunSession } from '@hs/runtime';
 * import { Device, HostBackend, MemoryKind, OK_VOID, type Result, unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * const representation = { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 1 };
 * class Fill extends Operator {
 *   out!: OutputPort;
 *   setup(spec: OperatorSpec): void {
 *     this.out = spec.output('out').producesTensor({ representation, bounds: { maxByteSpan: 64 }, storage: 'runtimePool' });
 *   }
 *   compute(ctx: ExecutionContext): Result<void> {
 *     const loan = unwrap(ctx.allocateTensor(this.out, { shape: [64], dtype: DType.uint8 }));
 *     const guard = unwrap(loan.write(ctx.cudaStream()));
 *     unwrap(ctx.backend.memsetAsync(ctx.cudaStream(), guard.range, 7));
 *     unwrap(guard.commit());
 *     ctx.finish();
 *     return ctx.emit(this.out, loan);
 *   }
 * }
 * class Check extends Operator {
 *   in!: InputPort;
 *   seen = 0;
 *   setup(spec: OperatorSpec): void {
 *     this.in = spec.input('in', representation);
 *   }
 *   async compute(ctx: ExecutionContext): Promise<Result<void>> {
 *     const bytes = new Uint8Array(64);
 *     await ctx.receive(this.in)!.copyToHost(bytes, ctx.cudaStream());
 *     this.seen = bytes[0]!;
 *     return OK_VOID;
 *   }
 * }
 *
 * const graph = new Graph('two-gpus');
 * const fill = graph.add(new Fill('fill'));
 * const copy = graph.add(new DeviceCopy('copy', { dtype: DType.uint8, rank: 1, maxByteSpan: 64 }));
 * const check = graph.add(new Check('check'));
 * graph.addFlow(fill.out, copy.input);
 * graph.addFlow(copy.output, check.in);
 * const deployment = { bindTensorOutputDevice: { 'fill.out': Device.cuda(0), 'copy.output': Device.cuda(1) } };
 * const backend = new HostBackend({ deviceCount: 2 });
 * const session = unwrap(RunSession.create(unwrap(compile(graph, { deployment })), { backend }));
 * await session.run();
 * session.dispose();
 * backend.dispose();
 * console.log(`cuda:0 -> cuda:1, first byte ${check.seen}`);
 * ```
 */
export class DeviceCopy extends Operator {
  /** The tensors to copy, from any device (`{ crossDevice: true }`). */
  input!: InputPort;
  /** The copies, in a cudaDevice pool on this operator's device. */
  output!: OutputPort;
  readonly #options: DeviceCopyOptions;
  #backend: Backend | null = null;
  #staging: DeviceMemory | null = null;
  /** The staging range, as the `Result` every staged copy of the run reuses. */
  #stagingRange: Result<MemoryRange> | null = null;
  /** The stream of the last staged copy (the buffer is in use until it ran). */
  #stagingStream: Stream | null = null;

  /**
   * @throws HsError `InvalidArgument` when `dtype` is not a `DType`, `maxByteSpan` not a positive safe integer or
   *   `rank` not a non-negative integer.
   */
  constructor(name: string, options: DeviceCopyOptions) {
    super(name);
    if (
      typeof options !== 'object' ||
      options === null ||
      !(options.dtype instanceof DType) ||
      !Number.isSafeInteger(options.maxByteSpan) ||
      options.maxByteSpan <= 0 ||
      !Number.isInteger(options.rank) ||
      options.rank < 0
    ) {
      throw new HsError(ErrorCode.InvalidArgument, `DeviceCopy ${name}: options need dtype (a DType such as DType.uint8), a non-negative integer rank and a positive safe-integer maxByteSpan`);
    }
    this.#options = Object.freeze({ dtype: options.dtype, rank: options.rank, maxByteSpan: options.maxByteSpan });
  }

  setup(spec: OperatorSpec): void {
    const { dtype, rank, maxByteSpan } = this.#options;
    const representation = { memoryKind: MemoryKind.CudaDevice, dtype, rank };
    this.input = spec.input('input', representation, { crossDevice: true });
    this.output = spec.output('output').producesTensor({ representation, bounds: { maxByteSpan, maxRank: rank }, storage: 'runtimePool' });
  }

  compute(ctx: ExecutionContext): Result<void> {
    // A retry after a full reject edge: the copy is made (its readiness recorded); emit it again or keep it.
    const pending = ctx.pendingLoan(this.output);
    if (pending !== undefined) return this.#emitOrRetain(ctx, pending);
    const tensor = ctx.receive(this.input);
    if (tensor === undefined) return OK_VOID;
    const backend = ctx.backend;
    const stream = ctx.cudaStream();
    const peer = backend.peerCopy;
    if (peer === undefined) return err(ErrorCode.NotSupported, `DeviceCopy ${this.name}: the ${backend.name} backend has no peerCopy capability (an older @hs/cuda-native addon); rebuild or update it`);
    if (tensor.byteSize > this.#options.maxByteSpan || !isContiguous(tensor.shape, tensor.strides)) {
      return err(
        ErrorCode.InvalidArgument,
        `DeviceCopy ${this.name}: tensor ${tensor.name} is ${tensor.byteSize} bytes${isContiguous(tensor.shape, tensor.strides) ? '' : ', not contiguous'}; it copies contiguous tensors of at most ${this.#options.maxByteSpan} bytes`,
      );
    }
    let staging: MemoryRange | undefined;
    if (!peer.canAccessPeer(stream.device, tensor.device)) {
      const made = this.#stagingFor(backend, stream);
      if (!made.ok) return made;
      staging = made.value;
    }
    const loan = ctx.allocateTensor(this.output, { shape: tensor.shape, dtype: tensor.dtype });
    if (!loan.ok) return loan.error.code === ErrorCode.ResourceExhausted ? OK_VOID : loan;
    const guard = loan.value.write(stream);
    if (!guard.ok) return guard;
    const src = tensor.data();
    const target = guard.value.range;
    const dst = target.byteLength === src.byteLength ? target : { memory: target.memory, byteOffset: target.byteOffset, byteLength: src.byteLength, label: target.label };
    const copied = peer.copyAsync(stream, dst, src, staging);
    if (!copied.ok) return copied;
    const committed = guard.value.commit();
    if (!committed.ok) return committed;
    // the input's lease returns after compute() with a release event recorded on `stream`, behind the copy
    return this.#emitOrRetain(ctx, loan.value);
  }

  /** Emits `loan`; a full `reject` edge (`Backpressured`) keeps it for the retry activation instead. */
  #emitOrRetain(ctx: ExecutionContext, loan: TensorLoan): Result<void> {
    const emitted = ctx.emit(this.output, loan);
    if (emitted.ok || emitted.error.code !== ErrorCode.Backpressured) return emitted;
    return ctx.retainPending(this.output, loan);
  }

  /**
   * Gives back the staging buffer, once the last staged copy on the stream that used it has run (a host wait
   * on the cold path only; a run that never staged returns at once).
   */
  override async stop(): Promise<void> {
    const backend = this.#backend;
    const staging = this.#staging;
    const stream = this.#stagingStream;
    this.#backend = null;
    this.#staging = null;
    this.#stagingRange = null;
    this.#stagingStream = null;
    if (backend === null || staging === null) return;
    try {
      if (stream !== null && !stream.destroyed) await backend.synchronizeStream(stream);
    } finally {
      backend.free(staging);
    }
  }

  /** The staging buffer (made at the first staged copy of a run, given back by `stop()`) for a copy on `stream`. */
  #stagingFor(backend: Backend, stream: Stream): Result<MemoryRange> {
    this.#stagingStream = stream;
    if (this.#stagingRange !== null) return this.#stagingRange;
    const made = backend.allocate({ kind: MemoryKind.PinnedHost, device: Device.cpu(), byteSize: this.#options.maxByteSpan, label: `${this.name} staging` });
    if (!made.ok) return made;
    this.#backend = backend;
    this.#staging = made.value;
    this.#stagingRange = ok({ memory: made.value, byteOffset: 0, byteLength: this.#options.maxByteSpan, label: `${this.name} staging` });
    return this.#stagingRange;
  }
}

/** Row-major contiguous strides (elements) for `shape`. */
function isContiguous(shape: readonly number[], strides: readonly number[]): boolean {
  let expected = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    if ((shape[i] as number) !== 1 && strides[i] !== expected) return false;
    expected *= shape[i] as number;
  }
  return true;
}
