import type { DeviceMemory, Event, EventOptions, MemoryRange, Stream } from './backend.js';
import type { Device } from './device.js';
import type { Result } from './errors.js';
import type { MemoryKind } from './memory-kind.js';

/**
 * Optional `Backend` capability: 64-bit stream memory operations (CUDA's `cuStreamWriteValue64` and
 * `cuStreamWaitValue64`), the device-side signal behind a generation fence. Present on a `CudaBackend`
 * whose driver exposes them, and on the host backend, which emulates them as ops of its stream queues
 * (a value wait blocks its stream, never the host; in auto mode blocked value waits are re-checked on a
 * 1 ms timer, because another process may write the target; in manual mode only `step()` and
 * `runUntilIdle()` re-check them). Neither call blocks the host.
 *
 * `target` is an 8-byte range of cudaDevice or pinnedHost memory of this backend (its own or adopted: an
 * @hs/ipc shared-memory segment adopted as pinnedHost memory), at a byte offset that is a multiple of 8;
 * the value is a little-endian unsigned 64-bit integer. On CUDA, pinnedHost memory is page-locked portable
 * and mapped (`cudaHostAlloc`, or `cudaHostRegister` when adopted), so on a unified-addressing system the
 * driver takes its host address as it is.
 * Errors (Result): InvalidArgument (a range that is not 8 bytes, misaligned or of another memory kind, a
 * value outside 0..2^64-1, a foreign stream), InvalidState (a destroyed stream or freed memory),
 * NotSupported (CUDA: a pinnedHost target on a device that cannot use host pointers of registered memory),
 * DeviceError (the driver refused, naming the CUresult).
 * Spec: "Crossing process boundaries: the generation fence".
 *
 * @example
 * ```ts
 * const ops = backend.streamMemoryOps;
 * if (ops === undefined) return err(ErrorCode.NotSupported, 'no stream memory operations on this backend');
 * unwrap(ops.writeValue64(producer, counter, 7n));   // after the producer's earlier work
 * unwrap(ops.waitValue64(consumer, counter, 7n));    // later consumer work waits on the device
 * ```
 */
export interface StreamMemoryOperations {
  /** Enqueues on `stream` a write of `value` into `target`, after every write enqueued on `stream` before it. */
  writeValue64(stream: Stream, target: MemoryRange, value: bigint): Result<void>;
  /** Makes work enqueued on `stream` after this call wait, on the device, until the value at `target` is at least `value`. */
  waitValue64(stream: Stream, target: MemoryRange, value: bigint): Result<void>;
}

/** What `IpcHandleOperations.importMemory` maps. */
export interface IpcMemoryImport {
  /** The device to map the memory on: the exporting allocation's device. */
  readonly device: Device;
  /** The 64-byte `cudaIpcMemHandle_t` another process got from `exportMemory`. */
  readonly handle: Uint8Array;
  /**
   * Bytes of the exported allocation this process uses: at most its size, which the CUDA backend checks
   * on the mapped memory (`cuMemGetAddressRange`), refusing a larger one with `InvalidArgument`.
   */
  readonly byteSize: number;
  /** Name shown in diagnostics. */
  readonly label?: string;
}

/**
 * Optional `Backend` capability: CUDA IPC handles of memory and events, to share device memory and
 * readiness with another process. Present on the CUDA backend; absent on the host backend (its device
 * memory is this process's JS heap).
 *
 * Handles are 64-byte `Uint8Array`s to send as they are. The exporting process keeps the memory (or
 * event) alive until every importer closed it. Errors (Result): InvalidArgument (a handle that is not 64
 * bytes, memory that is not a synchronous-tier cudaDevice allocation of this backend, an event not
 * created with `{ interprocess: true }`, a bad size or device), InvalidState (freed or destroyed handles),
 * DeviceError (CUDA refused: another device, a freed allocation, the exporting process itself).
 * Spec: "Crossing process boundaries".
 *
 * @example
 * ```ts
 * // Process A
 * const memory = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device, byteSize: 1 << 20 }));
 * const handle = unwrap(backend.ipc!.exportMemory(memory));           // send these 64 bytes
 * // Process B
 * const mapped = unwrap(backend.ipc!.importMemory({ device, handle, byteSize: 1 << 20 }));
 * backend.free(mapped);                                               // unmaps it here
 * ```
 */
export interface IpcHandleOperations {
  /** The 64-byte IPC handle of `memory` (from `allocate` with kind cudaDevice). */
  exportMemory(memory: DeviceMemory): Result<Uint8Array>;
  /**
   * Maps another process's exported allocation into this process as cudaDevice memory of this backend.
   * `free()` (or `freeAsync()`) unmaps it once the work enqueued on this backend's streams before the free
   * completed; it never frees the exporter's memory. `InvalidArgument` (and nothing stays mapped) when
   * `byteSize` exceeds the allocation the handle maps, so an announced size cannot reach past its end.
   */
  importMemory(request: IpcMemoryImport): Result<DeviceMemory>;
  /** The 64-byte IPC handle of an event created with `createEvent(device, { interprocess: true })`. */
  exportEvent(event: Event): Result<Uint8Array>;
  /**
   * Opens another process's interprocess event as an event of this backend: streams can wait on it and it
   * can be queried; recording it is the exporter's. `destroyEvent` closes it here.
   */
  importEvent(device: Device, handle: Uint8Array, options?: EventOptions): Result<Event>;
}

/**
 * A validated `hs_memory_resource_v1` table (`native/include/hs/hs.h`) of another native addon, opened by
 * `Backend.openNativeMemoryTable`: its allocations come back as memory of the backend that opened it
 * (host and pinnedHost blocks adopted with their host view, cudaDevice blocks adopted as device memory).
 *
 * Every pointer the table returns is checked (non-null, aligned); a bad one is given back through the
 * table and reported. Errors (Result, messages start with "the native table"): OutOfMemory,
 * InvalidArgument, NotSupported and DeviceError from the table's status codes; ProtocolError when the
 * table breaks the C contract (a misaligned or NULL pointer, an unknown status); InvalidArgument for
 * memory this table did not hand out or a stream of another device; InvalidState once closed.
 * Spec: "Resource (allocator)": a resource supplied by a downstream native library (nanovdb-memory-resources).
 */
export interface NativeMemoryTable {
  /** Memory kind the table serves. */
  readonly kind: MemoryKind;
  /** Device of every block (`Device.cpu()` for host and pinnedHost memory). */
  readonly device: Device;
  /** The table's `name`, empty when it had none. */
  readonly name: string;
  /**
   * True when the table has the stream-ordered pair (`allocate_async`/`deallocate_async`) and the backend
   * can hand it native streams (the CUDA backend): `allocateAsync`/`deallocateAsync` work.
   */
  readonly streamOrdered: boolean;
  /** Blocks handed out and not yet given back. */
  readonly liveBlocks: number;
  /** True when `memory` is a live block of this table. */
  owns(memory: DeviceMemory): boolean;
  /** `allocate` through the table: `bytes` > 0, `alignment` a power of two up to 2^30. */
  allocate(bytes: number, alignment: number, label: string): Result<DeviceMemory>;
  /** `allocate_async` on `stream`'s native stream; the block may be used by work enqueued on `stream` afterwards. */
  allocateAsync(bytes: number, alignment: number, stream: Stream, label: string): Result<DeviceMemory>;
  /**
   * Retires the block's backend handle (detaching its host view) and gives it back through `deallocate`;
   * the block must be quiescent. The memory goes back to the table even when the backend refuses the handle.
   */
  deallocate(memory: DeviceMemory, bytes: number, alignment: number): Result<void>;
  /** As `deallocate`, through `deallocate_async` in `stream` order. */
  deallocateAsync(memory: DeviceMemory, bytes: number, alignment: number, stream: Stream): Result<void>;
  /** Runs the table's `destroy` once; later calls return InvalidState. Idempotent. */
  close(): void;
}

/** How `PeerCopyOperations.copyAsync` moved the bytes: within one device, directly between two, or through pinned host memory. */
export type PeerCopyPath = 'sameDevice' | 'peer' | 'staged';

/**
 * Optional `Backend` capability: stream-ordered copies of cudaDevice memory from any device of the backend
 * to another (or the same) one. Present on both backends. On CUDA a copy between two devices is a peer
 * copy (`cudaMemcpyPeerAsync`, with peer access enabled once per pair) when `cudaDeviceCanAccessPeer` says
 * the destination can reach the source, and otherwise is staged through pinned host memory the caller
 * provides (a copy to the staging range, then from it, both on `stream`). The host backend copies between
 * its emulated devices; `HostBackendOptions.peerAccess: false` makes it take the staged path.
 *
 * The copy is enqueued on `stream`, a stream of the destination's device, after the work enqueued there
 * before it; order it after the source's writer yourself (`streamWaitEvent` on the writer's event, which
 * may be on the source's device). Neither call blocks the host. Errors (Result, the same words on every
 * backend): InvalidArgument (a range that is not cudaDevice memory of this backend, a stream of another
 * device than the destination, lengths that differ, a staged copy without a pinnedHost staging range of
 * at least the copy's length), InvalidState (a destroyed stream or freed memory), DeviceError (CUDA
 * refused, naming the error). Spec: "Current limitations" (hs inserts no cross-device copies: this is the
 * explicit one a graph places, through the runtime's `DeviceCopy` operator).
 *
 * @example
 * ```ts
 * import { Device, HostBackend, MemoryKind, unwrap } from '@hs/streams';
 *
 * const backend = new HostBackend({ deviceCount: 2 });
 * const peer = backend.peerCopy;
 * const src = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: Device.cuda(0), byteSize: 256 }));
 * const dst = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: Device.cuda(1), byteSize: 256 }));
 * const onDevice1 = unwrap(backend.createStream(Device.cuda(1)));
 * const range = (memory: typeof src) => ({ memory, byteOffset: 0, byteLength: 256, label: memory.label });
 * const path = unwrap(peer.copyAsync(onDevice1, range(dst), range(src)));
 * await backend.synchronizeStream(onDevice1);
 * console.log(`copied cuda:0 -> cuda:1 (${path}); peer access ${peer.canAccessPeer(Device.cuda(1), Device.cuda(0))}`);
 * backend.dispose();
 * ```
 */
export interface PeerCopyOperations {
  /**
   * True when work on `device` can read `peer`'s memory directly (always for a device and itself); false
   * for a device this backend does not have.
   */
  canAccessPeer(device: Device, peer: Device): boolean;
  /**
   * Enqueues on `stream` (a stream of `dst`'s device) a copy of `src` into `dst`, both cudaDevice memory
   * of equal length, and returns the path it took. `staging` (pinnedHost memory, at least as long) is
   * needed only when `canAccessPeer(dst device, src device)` is false; it is in use until the copy
   * completes in `stream` order.
   */
  copyAsync(stream: Stream, dst: MemoryRange, src: MemoryRange, staging?: MemoryRange): Result<PeerCopyPath>;
}
