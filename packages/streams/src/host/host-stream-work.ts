import type { KernelLaunch, MemoryRange } from '../backend.js';
import type { StreamOrderingChecker } from '../ordering/ordering-checker.js';
import type { HostMemory } from './host-memory.js';
import type { HostStream } from './host-stream.js';
import { OpKind, type OpPool } from './stream-op.js';
import type { StreamScheduler } from './stream-scheduler.js';

/**
 * The host backend's stream work: each call declares its accesses to the ordering checker (when one is
 * enabled) and enqueues one reused op record (no allocation per call) on the stream's queue. Arguments
 * are validated by the backend first.
 */
export class HostStreamWork {
  constructor(
    private readonly ops: OpPool,
    private readonly scheduler: StreamScheduler,
    private readonly checker: StreamOrderingChecker | null,
  ) {}

  memcpy(s: HostStream, dst: MemoryRange, src: MemoryRange): void {
    if (this.checker !== null) {
      this.checker.beginStreamOp(s.clockIndex);
      this.checker.access(s.clockIndex, src, 'read', 'memcpy');
      this.checker.access(s.clockIndex, dst, 'write', 'memcpy');
    }
    const op = this.ops.take();
    op.kind = OpKind.Memcpy;
    op.dst = dst.memory as HostMemory;
    op.dstOffset = dst.byteOffset;
    op.byteLength = dst.byteLength;
    op.src = src.memory as HostMemory;
    op.srcOffset = src.byteOffset;
    this.scheduler.enqueue(s, op);
  }

  memset(s: HostStream, dst: MemoryRange, value: number): void {
    if (this.checker !== null) {
      this.checker.beginStreamOp(s.clockIndex);
      this.checker.access(s.clockIndex, dst, 'write', 'memset');
    }
    const op = this.ops.take();
    op.kind = OpKind.Memset;
    op.dst = dst.memory as HostMemory;
    op.dstOffset = dst.byteOffset;
    op.byteLength = dst.byteLength;
    op.value = value;
    this.scheduler.enqueue(s, op);
  }

  copyFromHost(s: HostStream, dst: MemoryRange, src: Uint8Array): void {
    if (this.checker !== null) {
      this.checker.beginStreamOp(s.clockIndex);
      this.checker.access(s.clockIndex, dst, 'write', 'copy from host');
    }
    const op = this.ops.take();
    op.kind = OpKind.CopyFromHost;
    op.dst = dst.memory as HostMemory;
    op.dstOffset = dst.byteOffset;
    op.byteLength = dst.byteLength;
    op.hostBytes = src;
    this.scheduler.enqueue(s, op);
  }

  copyToHost(s: HostStream, dst: Uint8Array, src: MemoryRange): void {
    if (this.checker !== null) {
      this.checker.beginStreamOp(s.clockIndex);
      this.checker.access(s.clockIndex, src, 'read', 'copy to host');
    }
    const op = this.ops.take();
    op.kind = OpKind.CopyToHost;
    op.src = src.memory as HostMemory;
    op.srcOffset = src.byteOffset;
    op.byteLength = src.byteLength;
    op.hostBytes = dst;
    this.scheduler.enqueue(s, op);
  }

  /** Makes `s` wait until `target` completed `position` ops (an event's capture). */
  wait(s: HostStream, target: HostStream, position: number): void {
    const op = this.ops.take();
    op.kind = OpKind.Wait;
    op.waitStream = target;
    op.waitPosition = position;
    this.scheduler.enqueue(s, op);
  }

  /** Enqueues a store of the little-endian u64 `value` into the 8 bytes of `target`. */
  writeValue64(s: HostStream, target: MemoryRange, value: bigint): void {
    if (this.checker !== null) {
      this.checker.beginStreamOp(s.clockIndex);
      this.checker.access(s.clockIndex, target, 'write', 'write value64');
    }
    const op = this.ops.take();
    op.kind = OpKind.WriteValue64;
    op.dst = target.memory as HostMemory;
    op.dstOffset = target.byteOffset;
    op.byteLength = 8;
    op.captureValue64(value);
    this.scheduler.enqueue(s, op);
  }

  /**
   * Enqueues a wait until the little-endian u64 at `target` is >= `value`. The checker sees no access: the
   * counter is a signal another stream (or process) writes, and the value wait does not order later work
   * for the checker (only events do).
   */
  waitValue64(s: HostStream, target: MemoryRange, value: bigint): void {
    const op = this.ops.take();
    op.kind = OpKind.WaitValue64;
    op.dst = target.memory as HostMemory;
    op.dstOffset = target.byteOffset;
    op.byteLength = 8;
    op.captureValue64(value);
    this.scheduler.enqueue(s, op);
  }

  hostFunc(s: HostStream, fn: () => void): void {
    const op = this.ops.take();
    op.kind = OpKind.HostFunc;
    op.fn = fn;
    this.scheduler.enqueue(s, op);
  }

  kernel(s: HostStream, kernel: KernelLaunch): void {
    const c = this.checker;
    if (c !== null) {
      const operation = `kernel ${kernel.name}`;
      c.beginStreamOp(s.clockIndex);
      for (const r of kernel.reads) c.access(s.clockIndex, r, 'read', operation);
      for (const w of kernel.writes) c.access(s.clockIndex, w, 'write', operation);
    }
    const op = this.ops.take();
    op.kind = OpKind.Kernel;
    op.captureKernel(kernel);
    this.scheduler.enqueue(s, op);
  }
}
