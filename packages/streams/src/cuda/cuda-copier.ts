import type { CudaNativeBinding } from '@hs/cuda-native';
import type { MemoryRange } from '../backend.js';
import type { Device } from '../device.js';
import { OK_VOID, type Result } from '../errors.js';
import { MemoryKind } from '../memory-kind.js';
import type { CudaErrors } from './cuda-errors.js';
import type { CudaMemory, CudaStream } from './cuda-handles.js';
import type { CudaHostFunctions } from './cuda-host-functions.js';
import type { CudaMemoryTable } from './cuda-memory-table.js';
import type { HostArrayRegistrations } from './host-array-registrations.js';
import { PinnedStaging, type StagingBlock } from './pinned-staging.js';

/**
 * Copies and fills of the CUDA backend, in stream order: `cudaMemcpyAsync`/`cudaMemsetAsync` between
 * device, pinned and managed memory; pageable memory and JS buffers staged through per-device pinned
 * blocks (CUDA would copy pageable memory synchronously, and a host function waiting for the JS thread
 * would then deadlock), except JS views into this backend's own pinnedHost or cudaManaged memory, which
 * CUDA copies directly, and JS arrays the backend page-locked for repeat device-to-host copies
 * (`HostArrayRegistrations`); overlapping ranges of one allocation through a stream-ordered temporary.
 * Arguments are validated by the backend first.
 */
export class CudaCopier {
  /** Per device: pinned staging blocks (their events belong to that device). */
  private readonly staging: PinnedStaging[];

  constructor(
    private readonly cuda: CudaNativeBinding,
    private readonly errors: CudaErrors,
    devices: readonly Device[],
    private readonly memory: CudaMemoryTable,
    private readonly host: CudaHostFunctions,
    private readonly registrations: HostArrayRegistrations,
  ) {
    this.staging = devices.map((d) => new PinnedStaging(cuda, d.id));
  }

  /** The pinned staging blocks of `device` (also used by host-staged kernels). */
  stagingOf(device: Device): PinnedStaging {
    return this.staging[device.id] as PinnedStaging;
  }

  memcpy(s: CudaStream, dst: MemoryRange, src: MemoryRange): Result<void> {
    const d = dst.memory as CudaMemory;
    const sm = src.memory as CudaMemory;
    const n = dst.byteLength;
    if (n === 0) return OK_VOID;
    if (d.kind === MemoryKind.Host && sm.kind === MemoryKind.Host) {
      const from = sm.view as Uint8Array;
      const to = d.view as Uint8Array;
      return this.host.launchGated(s, 'memcpyAsync', () => to.set(from.slice(src.byteOffset, src.byteOffset + n), dst.byteOffset));
    }
    if (sm.kind === MemoryKind.Host) return this.copyIn(s, dst, null, src, 'memcpyAsync');
    if (d.kind === MemoryKind.Host) return this.copyOut(s, (d.view as Uint8Array).subarray(dst.byteOffset, dst.byteOffset + n), src, 'memcpyAsync');
    const dstAddress = d.address + BigInt(dst.byteOffset);
    const srcAddress = sm.address + BigInt(src.byteOffset);
    if (d === sm && dst.byteOffset < src.byteOffset + n && src.byteOffset < dst.byteOffset + n && dst.byteOffset !== src.byteOffset) {
      return this.overlappingCopy(s, dstAddress, srcAddress, n);
    }
    const status = this.cuda.memcpyAsync(dstAddress, srcAddress, n, s.handle);
    return status === 0 ? OK_VOID : this.errors.status('memcpyAsync', status);
  }

  memset(s: CudaStream, dst: MemoryRange, value: number): Result<void> {
    if (dst.byteLength === 0) return OK_VOID;
    const status = this.cuda.memsetAsync((dst.memory as CudaMemory).address + BigInt(dst.byteOffset), value, dst.byteLength, s.handle);
    return status === 0 ? OK_VOID : this.errors.status('memsetAsync', status);
  }

  /**
   * Copies into `dst` from a JS buffer (`bytes`) or pageable memory (`src`): directly when `bytes` lies in
   * a pinnedHost or cudaManaged allocation of this backend, else staged through pinned memory.
   */
  copyIn(s: CudaStream, dst: MemoryRange, bytes: Uint8Array | null, src: MemoryRange | null, method: string): Result<void> {
    const d = dst.memory as CudaMemory;
    const n = dst.byteLength;
    if (d.kind === MemoryKind.Host) {
      const view = d.view as Uint8Array;
      const copy = (bytes as Uint8Array).slice();
      return this.host.launchGated(s, method, () => view.set(copy, dst.byteOffset));
    }
    const dstAddress = d.address + BigInt(dst.byteOffset);
    const direct = bytes === null ? 0n : this.memory.directAddress(bytes, dstAddress);
    if (direct !== 0n) {
      const status = this.cuda.memcpyAsync(dstAddress, direct, n, s.handle);
      return status === 0 ? OK_VOID : this.errors.status(method, status);
    }
    const staging = this.stagingOf(s.device);
    let block: StagingBlock;
    try {
      block = staging.acquire(n);
    } catch (cause) {
      return this.errors.thrown(method, cause);
    }
    if (bytes !== null) block.view.set(bytes);
    else {
      const from = (src as MemoryRange).memory as CudaMemory;
      block.view.set((from.view as Uint8Array).subarray((src as MemoryRange).byteOffset, (src as MemoryRange).byteOffset + n));
    }
    const status = this.cuda.memcpyAsync(dstAddress, block.address, n, s.handle);
    staging.release(block, s.handle);
    return status === 0 ? OK_VOID : this.errors.status(method, status);
  }

  /**
   * Copies `src` into a JS buffer in stream order: directly when `dst` lies in a pinnedHost or cudaManaged
   * allocation of this backend or in a JS array it page-locked (kept alive until the copy ran), else device to
   * pinned staging, then staging to `dst` on the JS thread.
   */
  copyOut(s: CudaStream, dst: Uint8Array, src: MemoryRange, method: string): Result<void> {
    const sm = src.memory as CudaMemory;
    const n = src.byteLength;
    if (sm.kind === MemoryKind.Host) {
      const view = sm.view as Uint8Array;
      return this.host.launchGated(s, method, () => dst.set(view.subarray(src.byteOffset, src.byteOffset + n)));
    }
    const srcAddress = sm.address + BigInt(src.byteOffset);
    const direct = this.memory.directAddress(dst, srcAddress);
    if (direct !== 0n) {
      const status = this.cuda.memcpyAsync(direct, srcAddress, n, s.handle);
      return status === 0 ? OK_VOID : this.errors.status(method, status);
    }
    const registered = this.registrations.addressFor(dst);
    if (registered !== 0n) {
      let status = this.cuda.memcpyAsync(registered, srcAddress, n, s.handle);
      // The completion callback holds `dst` until the copy ran: its buffer cannot be collected (and unregistered) under it.
      if (status === 0) status = this.host.whenDone(s, () => void dst);
      return status === 0 ? OK_VOID : this.errors.status(method, status);
    }
    const staging = this.stagingOf(s.device);
    let block: StagingBlock;
    try {
      block = staging.acquire(n);
    } catch (cause) {
      return this.errors.thrown(method, cause);
    }
    let status = this.cuda.memcpyAsync(block.address, srcAddress, n, s.handle);
    // Nothing later on the stream touches the block, and no direct copy into `dst`'s buffer starts before this
    // write ran (see `HostArrayRegistrations.stagedCopyEnqueued`), so the stream need not wait for the copy-out:
    // the block is handed back from the JS side once its bytes were taken.
    if (status === 0) {
      this.registrations.stagedCopyEnqueued(dst);
      status = this.host.launchDetached(s.handle, () => {
        dst.set(block.view.subarray(0, n));
        staging.giveBack(block);
        this.registrations.stagedCopyLanded(dst);
      });
      if (status !== 0) this.registrations.stagedCopyLanded(dst);
    }
    if (status !== 0) staging.release(block, s.handle);
    return status === 0 ? OK_VOID : this.errors.status(method, status);
  }

  /** Frees every staging block and ends every JS-array registration through `free` (a release ordered after all enqueued work). */
  dispose(free: (kind: 1 | 2, address: bigint) => void): void {
    for (const staging of this.staging) staging.dispose(free);
    this.registrations.dispose((address) => free(2, address));
  }

  /** memmove semantics inside one allocation: copy through a stream-ordered temporary. */
  private overlappingCopy(s: CudaStream, dst: bigint, src: bigint, n: number): Result<void> {
    let temp: bigint;
    try {
      temp = this.cuda.mallocAsync(n, s.handle);
    } catch (cause) {
      return this.errors.thrown('memcpyAsync', cause);
    }
    let status = this.cuda.memcpyAsync(temp, src, n, s.handle);
    if (status === 0) status = this.cuda.memcpyAsync(dst, temp, n, s.handle);
    this.cuda.freeAsync(temp, s.handle);
    return status === 0 ? OK_VOID : this.errors.status('memcpyAsync', status);
  }
}
