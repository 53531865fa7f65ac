import type { KernelLaunch, MemoryRange } from '../backend.js';
import type { HostMemory } from './host-memory.js';
import type { HostStream } from './host-stream.js';
import type { KernelArguments } from './kernel-arguments.js';

/** What a queued op does. */
export enum OpKind {
  Kernel,
  Memcpy,
  Memset,
  CopyFromHost,
  CopyToHost,
  HostFunc,
  Wait,
  /** `StreamMemoryOperations.writeValue64`: stores a little-endian u64. */
  WriteValue64,
  /** `StreamMemoryOperations.waitValue64`: runnable once the little-endian u64 at the target is >= the value. */
  WaitValue64,
}

/** Scratch for splitting a bigint into 32-bit halves without allocating. */
const SPLIT = new DataView(new ArrayBuffer(8));

/**
 * One unit of queued stream work. Records are recycled through `OpPool`, so steady-state enqueueing
 * allocates nothing; the kernel argument arrays grow once per record and are reused.
 */
export class HostOp {
  kind: OpKind = OpKind.HostFunc;
  next: HostOp | null = null;
  dst: HostMemory | null = null;
  dstOffset = 0;
  byteLength = 0;
  src: HostMemory | null = null;
  srcOffset = 0;
  value = 0;
  hostBytes: Uint8Array | null = null;
  fn: (() => void) | null = null;
  /** Kernel name and host implementation, captured at launch with the arguments below. */
  kernelName = '';
  kernelHost: KernelLaunch['host'] | null = null;
  /**
   * Kernel ranges and scalars, copied at launch (like CUDA kernel arguments) into arrays that only grow;
   * the counts say how many entries are current.
   */
  private readonly reads: MemoryRange[] = [];
  private readonly writes: MemoryRange[] = [];
  private readonly params: number[] = [];
  private readCount = 0;
  private writeCount = 0;
  private paramCount = 0;
  waitStream: HostStream | null = null;
  waitPosition = 0;
  /** Low and high 32 bits of a value op's 64-bit value. */
  valueLow = 0;
  valueHigh = 0;

  /** Splits `value` (0..2^64-1) into `valueLow`/`valueHigh`; no allocation. */
  captureValue64(value: bigint): void {
    SPLIT.setBigUint64(0, value, true);
    this.valueLow = SPLIT.getUint32(0, true);
    this.valueHigh = SPLIT.getUint32(4, true);
  }

  /** Copies the launch's ranges and params into this record. */
  captureKernel(kernel: KernelLaunch): void {
    this.kernelName = kernel.name;
    this.kernelHost = kernel.host;
    this.readCount = copyInto(this.reads, kernel.reads);
    this.writeCount = copyInto(this.writes, kernel.writes);
    this.paramCount = copyInto(this.params, kernel.params);
  }

  /** True when the op may run now: anything but a wait, or a wait whose captured position completed. */
  get runnable(): boolean {
    if (this.kind === OpKind.Wait) return (this.waitStream as HostStream).completed >= this.waitPosition;
    if (this.kind === OpKind.WaitValue64) return valueReached(this.dst as HostMemory, this.dstOffset, this.valueLow, this.valueHigh);
    return true;
  }

  /** True for a value wait that is not runnable yet (its target may change outside this backend). */
  get blockedOnValue(): boolean {
    return this.kind === OpKind.WaitValue64 && !valueReached(this.dst as HostMemory, this.dstOffset, this.valueLow, this.valueHigh);
  }

  /** A short description used in fault messages (`kernel hs.rgbaToGray`, `memcpy`, ...). */
  describe(): string {
    switch (this.kind) {
      case OpKind.Kernel:
        return `kernel ${this.kernelName}`;
      case OpKind.Memcpy:
        return 'memcpy';
      case OpKind.Memset:
        return 'memset';
      case OpKind.CopyFromHost:
        return 'copy from host';
      case OpKind.CopyToHost:
        return 'copy to host';
      case OpKind.HostFunc:
        return 'host function';
      case OpKind.Wait:
        return 'event wait';
      case OpKind.WriteValue64:
        return 'write value64';
      case OpKind.WaitValue64:
        return 'wait value64';
    }
  }

  /** Performs the op on the emulated memory. Throws whatever a kernel or host function throws. */
  execute(args: KernelArguments): void {
    switch (this.kind) {
      case OpKind.Kernel:
        (this.kernelHost as KernelLaunch['host'])(
          args.readViews(this.reads, this.readCount),
          args.writeViews(this.writes, this.writeCount),
          args.params(this.params, this.paramCount),
        );
        return;
      case OpKind.Memcpy: {
        const dst = (this.dst as HostMemory).bytes;
        const src = (this.src as HostMemory).bytes;
        const end = this.srcOffset + this.byteLength;
        if (dst === src) dst.copyWithin(this.dstOffset, this.srcOffset, end);
        else dst.set(src.subarray(this.srcOffset, end), this.dstOffset);
        return;
      }
      case OpKind.Memset:
        (this.dst as HostMemory).bytes.fill(this.value, this.dstOffset, this.dstOffset + this.byteLength);
        return;
      case OpKind.CopyFromHost:
        (this.dst as HostMemory).bytes.set(this.hostBytes as Uint8Array, this.dstOffset);
        return;
      case OpKind.CopyToHost: {
        const src = (this.src as HostMemory).bytes;
        (this.hostBytes as Uint8Array).set(src.subarray(this.srcOffset, this.srcOffset + this.byteLength));
        return;
      }
      case OpKind.HostFunc:
        (this.fn as () => void)();
        return;
      case OpKind.Wait:
      case OpKind.WaitValue64:
        return;
      case OpKind.WriteValue64:
        storeValue64(this.dst as HostMemory, this.dstOffset, this.valueLow, this.valueHigh);
        return;
    }
  }

  /**
   * Drops the references of a finished op. The kernel range arrays keep their entries until overwritten
   * (clearing them costs more than the op), so a free record may keep its last kernel's ranges
   * reachable; the free list never holds more records than were once in flight.
   */
  reset(): void {
    this.next = null;
    this.dst = null;
    this.src = null;
    this.hostBytes = null;
    this.fn = null;
    this.kernelHost = null;
    this.waitStream = null;
  }
}

/**
 * Stores a little-endian u64 as two 32-bit stores, low word first, with `Atomics.store` when the bytes
 * are 4-byte aligned in their buffer. Another process (or thread) polling the same mapping reads high,
 * low, high (see `valueReached`), so for a counter that only grows it never sees more than was written.
 */
function storeValue64(memory: HostMemory, offset: number, low: number, high: number): void {
  const words = memory.words();
  if (words !== null) {
    const i = (memory.bytes.byteOffset + offset) / 4;
    Atomics.store(words, i, low);
    Atomics.store(words, i + 1, high);
    return;
  }
  const b = memory.bytes;
  b[offset] = low & 0xff;
  b[offset + 1] = (low >>> 8) & 0xff;
  b[offset + 2] = (low >>> 16) & 0xff;
  b[offset + 3] = low >>> 24;
  b[offset + 4] = high & 0xff;
  b[offset + 5] = (high >>> 8) & 0xff;
  b[offset + 6] = (high >>> 16) & 0xff;
  b[offset + 7] = high >>> 24;
}

/** True when the little-endian u64 at `offset` is >= `high:low`; a torn read (high changed) answers false. */
function valueReached(memory: HostMemory, offset: number, low: number, high: number): boolean {
  let h1: number;
  let l: number;
  let h2: number;
  const words = memory.words();
  if (words !== null) {
    const i = (memory.bytes.byteOffset + offset) / 4;
    h1 = Atomics.load(words, i + 1);
    l = Atomics.load(words, i);
    h2 = Atomics.load(words, i + 1);
  } else {
    const b = memory.bytes;
    h1 = (b[offset + 4] as number) | ((b[offset + 5] as number) << 8) | ((b[offset + 6] as number) << 16) | (((b[offset + 7] as number) << 24) >>> 0);
    l = ((b[offset] as number) | ((b[offset + 1] as number) << 8) | ((b[offset + 2] as number) << 16) | ((b[offset + 3] as number) << 24)) >>> 0;
    h2 = h1;
  }
  h1 >>>= 0;
  h2 >>>= 0;
  if (h1 !== h2) return false;
  return h1 > high || (h1 === high && l >>> 0 >= low);
}

/** Copies `source` into the front of `target` (which only grows); returns the count copied. */
function copyInto<T>(target: T[], source: readonly T[]): number {
  const n = source.length;
  const kept = Math.min(n, target.length);
  for (let i = 0; i < kept; i++) target[i] = source[i] as T;
  for (let i = kept; i < n; i++) target.push(source[i] as T);
  return n;
}

/** Free list of op records: `take()` reuses a finished record when one exists. */
export class OpPool {
  private free: HostOp | null = null;

  take(): HostOp {
    const op = this.free;
    if (op === null) return new HostOp();
    this.free = op.next;
    op.next = null;
    return op;
  }

  give(op: HostOp): void {
    op.reset();
    op.next = this.free;
    this.free = op;
  }
}
