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
}

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
    return this.kind !== OpKind.Wait || (this.waitStream as HostStream).completed >= this.waitPosition;
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
