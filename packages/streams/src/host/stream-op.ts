import type { KernelLaunch, MemoryRange } from '../backend.js';
import type { HostMemory } from './host-memory.js';
import type { HostStream } from './host-stream.js';

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
 * allocates nothing; the kernel arrays grow once per record and are reused.
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
  kernel: KernelLaunch | null = null;
  /** Kernel ranges and scalars, copied at launch (like CUDA kernel arguments). */
  readonly reads: MemoryRange[] = [];
  readonly writes: MemoryRange[] = [];
  readonly params: number[] = [];
  readonly readViews: Uint8Array[] = [];
  readonly writeViews: Uint8Array[] = [];
  waitStream: HostStream | null = null;
  waitPosition = 0;

  /** Copies the launch's ranges and params into this record. */
  captureKernel(kernel: KernelLaunch): void {
    this.kernel = kernel;
    copyInto(this.reads, kernel.reads);
    copyInto(this.writes, kernel.writes);
    copyInto(this.params, kernel.params);
  }

  /** True when the op may run now: anything but a wait, or a wait whose captured position completed. */
  get runnable(): boolean {
    return this.kind !== OpKind.Wait || (this.waitStream as HostStream).completed >= this.waitPosition;
  }

  /** A short description used in fault messages (`kernel hs.rgbaToGray`, `memcpy`, ...). */
  describe(): string {
    switch (this.kind) {
      case OpKind.Kernel:
        return `kernel ${this.kernel?.name ?? '?'}`;
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
  execute(): void {
    switch (this.kind) {
      case OpKind.Kernel:
        this.runKernel();
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

  private runKernel(): void {
    fillViews(this.readViews, this.reads);
    fillViews(this.writeViews, this.writes);
    (this.kernel as KernelLaunch).host(this.readViews, this.writeViews, this.params);
  }

  /** Drops every reference so a recycled record keeps nothing alive. */
  reset(): void {
    this.next = null;
    this.dst = null;
    this.src = null;
    this.hostBytes = null;
    this.fn = null;
    this.kernel = null;
    this.waitStream = null;
    if (this.reads.length > 0) this.reads.length = 0;
    if (this.writes.length > 0) this.writes.length = 0;
    if (this.params.length > 0) this.params.length = 0;
    if (this.readViews.length > 0) this.readViews.length = 0;
    if (this.writeViews.length > 0) this.writeViews.length = 0;
  }
}

function copyInto<T>(target: T[], source: readonly T[]): void {
  target.length = source.length;
  for (let i = 0; i < source.length; i++) target[i] = source[i] as T;
}

function fillViews(views: Uint8Array[], ranges: readonly MemoryRange[]): void {
  views.length = ranges.length;
  for (let i = 0; i < ranges.length; i++) {
    const r = ranges[i] as MemoryRange;
    const bytes = (r.memory as HostMemory).bytes;
    views[i] = new Uint8Array(bytes.buffer, bytes.byteOffset + r.byteOffset, r.byteLength);
  }
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
