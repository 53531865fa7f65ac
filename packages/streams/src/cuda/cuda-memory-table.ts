import type { CudaNativeBinding } from '@hs/cuda-native';
import type { ValidAllocation } from '../allocation-request.js';
import type { DeviceMemory, DeviceMemoryAdoption, HostMemoryAdoption } from '../backend.js';
import { Device } from '../device.js';
import { ErrorCode, err, ok, type Result } from '../errors.js';
import { MemoryKind } from '../memory-kind.js';
import type { CudaErrors } from './cuda-errors.js';
import { CudaAllocationOrigin, CudaMemory, type CudaStream } from './cuda-handles.js';
import type { CudaStreamTable } from './cuda-stream-table.js';

/** Alignment CUDA's allocators guarantee, bytes. */
const CUDA_ALIGNMENT = 256;

/**
 * The CUDA backend's allocation table and release ordering: every live `CudaMemory` with how it was
 * obtained (which decides how it is released), the host views of host-accessible memory (so copies from
 * and to them go direct), and per device an internal release stream that orders frees after the work
 * already enqueued. Frees that may synchronize the device run on the addon's release thread
 * (`deferFree`), never on the JS thread. Requests and handles are validated by the backend first.
 */
export class CudaMemoryTable {
  private readonly allocations = new Set<CudaMemory>();
  /**
   * Live pinnedHost and cudaManaged allocations by the ArrayBuffer of their host view (which starts at
   * `base`): a JS buffer lying in one is copied to or from directly, without staging.
   */
  private readonly hostAccessibleBuffers = new WeakMap<ArrayBuffer, CudaMemory>();
  /** Per device: an internal stream that orders frees after all other streams' work. */
  private readonly releaseStreams: bigint[];
  private readonly poolsSupported: boolean[];
  private nextMemoryId = 1;

  constructor(
    private readonly cuda: CudaNativeBinding,
    private readonly errors: CudaErrors,
    private readonly owner: object,
    private readonly devices: readonly Device[],
    private readonly streams: CudaStreamTable,
    memoryPools: { readonly releaseThreshold: number; readonly enabled: boolean },
  ) {
    this.poolsSupported = devices.map((d) => memoryPools.enabled && cuda.deviceProperties(d.id).memoryPoolsSupported);
    this.releaseStreams = devices.map((d) => {
      if (this.poolsSupported[d.id]) cuda.setPoolReleaseThreshold(d.id, memoryPools.releaseThreshold);
      return cuda.streamCreate(d.id, 0);
    });
  }

  /** `cudaMalloc`, `cudaHostAlloc`, `cudaMallocManaged`, or a JS ArrayBuffer for host memory; over-allocates above 256-byte alignment. */
  allocate(request: ValidAllocation, label = `${request.kind} allocation ${this.nextMemoryId}`): Result<DeviceMemory> {
    const { kind, device, byteSize, alignment } = request;
    const padded = byteSize + (alignment > CUDA_ALIGNMENT ? alignment : 0);
    if (kind === MemoryKind.Host) {
      let buffer: ArrayBuffer;
      try {
        buffer = new ArrayBuffer(byteSize + alignment);
      } catch (cause) {
        return err(ErrorCode.OutOfMemory, `allocate: the JS heap refused ${byteSize} bytes of host memory`, cause);
      }
      const start = this.cuda.addressOf(buffer);
      const skip = Number(alignUp(start, alignment) - start);
      return ok(this.track(device, kind, start + BigInt(skip), byteSize, label, CudaAllocationOrigin.JsHeap, start, buffer, new Uint8Array(buffer, skip, byteSize)));
    }
    let base: bigint;
    let origin: CudaAllocationOrigin;
    try {
      if (kind === MemoryKind.CudaDevice) {
        base = this.cuda.malloc(device.id, padded);
        origin = CudaAllocationOrigin.Malloc;
      } else if (kind === MemoryKind.PinnedHost) {
        base = this.cuda.mallocHost(padded);
        origin = CudaAllocationOrigin.PinnedHost;
      } else {
        base = this.cuda.mallocManaged(device.id, padded);
        origin = CudaAllocationOrigin.Managed;
      }
    } catch (cause) {
      return this.errors.thrown('allocate', cause);
    }
    const address = alignUp(base, alignment);
    let buffer: ArrayBuffer | null = null;
    let view: Uint8Array | null = null;
    if (kind !== MemoryKind.CudaDevice) {
      try {
        buffer = this.cuda.externalArrayBuffer(base, padded);
        view = new Uint8Array(buffer, Number(address - base), byteSize);
      } catch {
        // Runtimes without external buffers: the memory works for device work; hostView says NotSupported.
      }
    }
    const memory = this.track(device, kind, address, byteSize, label, origin, base, buffer, view);
    if (buffer !== null) this.hostAccessibleBuffers.set(buffer, memory);
    return ok(memory);
  }

  /** Refuses `m` at once; its release waits for the work enqueued on every stream so far. */
  free(m: CudaMemory): void {
    this.forget(m);
    if (m.origin === CudaAllocationOrigin.Adopted) return;
    const device = m.device.isCuda ? m.device.id : 0;
    const release = this.releaseStreams[device] as bigint;
    this.streams.fenceAllStreams(release);
    this.releaseAfter(m, release, device);
  }

  /** Wraps cudaDevice memory another allocator owns; `address` and `byteSize` are checked here. */
  adoptDevice(request: DeviceMemoryAdoption): Result<DeviceMemory> {
    const { address, byteSize } = request;
    if (typeof address !== 'bigint' || address <= 0n) {
      return err(ErrorCode.InvalidArgument, `adoptDeviceMemory: address must be a non-zero bigint device pointer, got ${String(address)}`);
    }
    if (!Number.isSafeInteger(byteSize) || byteSize <= 0) {
      return err(ErrorCode.InvalidArgument, `adoptDeviceMemory: byteSize must be a positive integer number of bytes, got ${String(byteSize)}`);
    }
    const label = request.label ?? `adopted cudaDevice memory ${this.nextMemoryId}`;
    return ok(this.track(request.device, MemoryKind.CudaDevice, address, byteSize, label, CudaAllocationOrigin.Adopted, address, null, null));
  }

  /** Wraps host bytes another allocator owns; pinnedHost is page-locked with `cudaHostRegister` unless its owner did. */
  adoptHost(request: HostMemoryAdoption): Result<DeviceMemory> {
    const { bytes, kind } = request;
    const address = this.cuda.addressOf(bytes);
    if (request.address !== address) {
      return err(ErrorCode.InvalidArgument, `adoptHostMemory: address ${String(request.address)} is not the address of bytes[0] (${address}); pass the mapping's own address`);
    }
    const label = request.label ?? `adopted ${kind} memory ${this.nextMemoryId}`;
    const buffer = bytes.buffer as ArrayBuffer;
    if (kind === MemoryKind.Host) {
      return ok(this.track(Device.cpu(), kind, address, bytes.byteLength, label, CudaAllocationOrigin.Adopted, address, buffer, bytes));
    }
    // Memory its owner page-locked already (cudaHostAlloc, a native resource table) stays theirs to unlock.
    const lockedByOwner = this.cuda.isPinnedHost(address);
    const status = lockedByOwner ? 0 : this.cuda.hostRegister(address, bytes.byteLength);
    if (status !== 0) {
      return err(ErrorCode.NotSupported, `adoptHostMemory: cudaHostRegister refused ${bytes.byteLength} bytes at ${address} (${this.cuda.errorName(status)}); adopt it as host memory instead`);
    }
    const origin = lockedByOwner ? CudaAllocationOrigin.Adopted : CudaAllocationOrigin.Registered;
    const memory = this.track(Device.cpu(), kind, address, bytes.byteLength, label, origin, address, buffer, bytes);
    // Direct copies find pinned memory by its ArrayBuffer; only a view spanning its whole buffer qualifies,
    // and a buffer this backend already maps (its own pinned allocation, adopted again) keeps its entry.
    if (bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength && !this.hostAccessibleBuffers.has(buffer)) {
      this.hostAccessibleBuffers.set(buffer, memory);
    }
    return ok(memory);
  }

  /** Tracks another process's allocation mapped here (`cudaIpcOpenMemHandle`); unmapped on free. */
  trackImported(device: Device, address: bigint, byteSize: number, label: string): DeviceMemory {
    return this.track(device, MemoryKind.CudaDevice, address, byteSize, label, CudaAllocationOrigin.IpcImported, address, null, null);
  }

  supportsMemoryPools(device: Device): boolean {
    const i = this.devices.indexOf(device);
    return i >= 0 && this.poolsSupported[i] === true;
  }

  /** `cudaMallocAsync` on `s` (the device supports memory pools; the request is cudaDevice on its device). */
  allocateAsync(request: ValidAllocation, label: string | undefined, s: CudaStream): Result<DeviceMemory> {
    const { byteSize, alignment } = request;
    let base: bigint;
    try {
      base = this.cuda.mallocAsync(byteSize + (alignment > CUDA_ALIGNMENT ? alignment : 0), s.handle);
    } catch (cause) {
      return this.errors.thrown('allocateAsync', cause);
    }
    return ok(this.track(s.device, MemoryKind.CudaDevice, alignUp(base, alignment), byteSize, label ?? `cudaDevice pool allocation ${this.nextMemoryId}`, CudaAllocationOrigin.PoolAsync, base, null, null));
  }

  /** Refuses `m` at once; releases it after the work enqueued on `s` so far. */
  freeAsync(m: CudaMemory, s: CudaStream): void {
    this.forget(m);
    this.releaseAfter(m, s.handle, s.device.id);
  }

  /**
   * The address CUDA can copy `bytes` to or from directly: `bytes` lies in a live pinnedHost or
   * cudaManaged allocation of this backend and does not overlap the `byteLength` bytes at `other` (the
   * other side of the copy). 0n otherwise (stage the copy).
   */
  directAddress(bytes: Uint8Array, other: bigint): bigint {
    const m = this.hostAccessibleBuffers.get(bytes.buffer as ArrayBuffer);
    if (m === undefined) return 0n;
    const address = m.base + BigInt(bytes.byteOffset);
    const n = BigInt(bytes.byteLength);
    return address < other + n && other < address + n ? 0n : address;
  }

  /**
   * Releases every live allocation after the work enqueued so far on every stream, and returns a function
   * that defers one more release (kind 1 `cudaFreeHost`: the copier's staging blocks; kind 2
   * `cudaHostUnregister`: the JS arrays it page-locked) after that work too.
   */
  releaseAll(): (kind: 1 | 2, address: bigint) => void {
    for (const r of this.releaseStreams) this.streams.fenceAllStreams(r);
    for (const m of this.allocations) {
      m.freed = true;
      const device = m.device.isCuda ? m.device.id : 0;
      this.releaseAfter(m, this.releaseStreams[device] as bigint, device);
      this.detach(m);
    }
    this.allocations.clear();
    const release = this.releaseStreams[0] as bigint;
    return (kind, address) => this.cuda.deferFree(kind, address, this.fenceEvent(release, 0));
  }

  /** `cudaHostUnregister` of `address` after the work enqueued so far on every stream. */
  unregisterAfterAllWork(address: bigint): void {
    const release = this.releaseStreams[0] as bigint;
    this.streams.fenceAllStreams(release);
    this.cuda.deferFree(2, address, this.fenceEvent(release, 0));
  }

  /** Destroys the internal release streams (after `releaseAll`). */
  dispose(): void {
    for (const r of this.releaseStreams) this.cuda.streamDestroy(r);
  }

  private track(
    device: Device,
    kind: MemoryKind,
    address: bigint,
    byteSize: number,
    label: string,
    origin: CudaAllocationOrigin,
    base: bigint,
    buffer: ArrayBuffer | null,
    view: Uint8Array | null,
  ): CudaMemory {
    const m = new CudaMemory(this.owner, this.nextMemoryId++, device, kind, address, byteSize, label, origin, base, buffer, view);
    this.allocations.add(m);
    return m;
  }

  private forget(m: CudaMemory): void {
    m.freed = true;
    this.allocations.delete(m);
    this.detach(m);
  }

  /** Detaches the host view so no JS access can reach memory about to be released. */
  private detach(m: CudaMemory): void {
    if (m.buffer !== null && this.hostAccessibleBuffers.get(m.buffer) === m) this.hostAccessibleBuffers.delete(m.buffer);
    // Only buffers over this backend's own pinned/managed allocations are detached; an adopted mapping's
    // buffer belongs to its owner.
    if (m.buffer !== null && (m.origin === CudaAllocationOrigin.PinnedHost || m.origin === CudaAllocationOrigin.Managed)) {
      this.cuda.detachArrayBuffer(m.buffer);
    }
    m.view = null;
  }

  /** Releases `m`'s memory after the work enqueued on `stream` (of device `device`) so far. */
  private releaseAfter(m: CudaMemory, stream: bigint, device: number): void {
    switch (m.origin) {
      case CudaAllocationOrigin.PoolAsync:
        this.cuda.freeAsync(m.base, stream);
        return;
      case CudaAllocationOrigin.Malloc:
      case CudaAllocationOrigin.Managed:
        this.cuda.deferFree(0, m.base, this.fenceEvent(stream, device));
        return;
      case CudaAllocationOrigin.PinnedHost:
        this.cuda.deferFree(1, m.base, this.fenceEvent(stream, device));
        return;
      case CudaAllocationOrigin.Registered:
        this.cuda.deferFree(2, m.base, this.fenceEvent(stream, device));
        return;
      case CudaAllocationOrigin.IpcImported:
        this.cuda.deferFree(3, m.base, this.fenceEvent(stream, device));
        return;
      case CudaAllocationOrigin.JsHeap:
      case CudaAllocationOrigin.Adopted:
        return;
    }
  }

  /** A fresh event recorded on `stream` (of device `device`); the release thread destroys it. */
  private fenceEvent(stream: bigint, device: number): bigint {
    const e = this.cuda.eventCreate(device, false);
    this.cuda.eventRecord(e, stream);
    return e;
  }
}

function alignUp(address: bigint, alignment: number): bigint {
  const a = BigInt(alignment);
  return ((address + a - 1n) / a) * a;
}
