/**
 * The typed surface of the native addon `hs_cuda.node` (built from `native/`). Handles (streams, events,
 * graphs) and addresses cross as `bigint`; sizes as numbers of bytes. Enqueue and query calls return a
 * CUDA status (`cudaError_t`, 0 = success, 600 = not ready) instead of throwing; calls that create
 * something throw an `Error` with a numeric `cudaError` property.
 */
export interface CudaNativeBinding extends CudaNativeBenchBinding {
  /** Version of this binding surface; 2 for this release (2 added the peer-copy bindings). */
  readonly abiVersion: number;
  /** `cudaErrorName: description` for a status code. */
  errorName(status: number): string;

  // ---- devices ----
  /** Runtime and driver versions and the device count; never throws (no driver: count 0 and status 35). */
  runtimeInfo(): RuntimeInfo;
  /** Properties and capability attributes of one device. */
  deviceProperties(ordinal: number): DeviceProperties;
  /** Any `cudaDeviceAttr` by its numeric code. */
  deviceAttribute(ordinal: number, attribute: number): number;
  /** The calling thread's current device (`cudaGetDevice`). */
  getDevice(): number;
  /** Makes `ordinal` the calling thread's current device (`cudaSetDevice`); throws an Error with `cudaError` on failure. */
  setDevice(ordinal: number): void;
  /** Free and total device memory, bytes. */
  memGetInfo(ordinal: number): {
    /** Free device memory, bytes. */
    free: number;
    /** Total device memory, bytes. */
    total: number;
  };

  // ---- streams and events ----
  /** A non-blocking stream (`cudaStreamNonBlocking`) with a priority (lower runs first). */
  streamCreate(device: number, priority: number): bigint;
  /** Destroys a stream (`cudaStreamDestroy`); returns the CUDA status. */
  streamDestroy(stream: bigint): number;
  /** `cudaStreamQuery`: 0 when all work is done, 600 (not ready) while work is pending. */
  streamQuery(stream: bigint): number;
  /** The priority CUDA clamped the stream's priority to. */
  streamPriority(stream: bigint): number;
  /** A timing-disabled event; `interprocess` adds `cudaEventInterprocess`. */
  eventCreate(device: number, interprocess: boolean): bigint;
  /** Destroys an event (`cudaEventDestroy`); returns the CUDA status. */
  eventDestroy(event: bigint): number;
  /** Records `event` on `stream` (`cudaEventRecord`); returns the CUDA status. */
  eventRecord(event: bigint, stream: bigint): number;
  /** `cudaEventQuery`: 0 when the captured work is done, 600 (not ready) otherwise; never blocks. */
  eventQuery(event: bigint): number;
  /**
   * Queries `count` events (0n counts as complete) in one call; writes 1/0 into `completed` and returns
   * the number complete, or `-status` on the first error.
   */
  eventQueryMany(events: BigUint64Array, count: number, completed: Uint8Array): number;
  /** Makes later work on `stream` wait for `event` on the device (`cudaStreamWaitEvent`); returns the CUDA status. */
  streamWaitEvent(stream: bigint, event: bigint): number;

  // ---- memory ----
  /** Stream-ordered allocation from the default pool of the stream's device. */
  mallocAsync(byteSize: number, stream: bigint): bigint;
  /** Stream-ordered free (`cudaFreeAsync`) of a `mallocAsync` allocation; returns the CUDA status. */
  freeAsync(address: bigint, stream: bigint): number;
  /** Bytes the device's default pool keeps cached instead of releasing (`cudaMemPoolAttrReleaseThreshold`). */
  setPoolReleaseThreshold(device: number, bytes: number): void;
  /** `cudaMalloc` of `byteSize` bytes on `device`; throws an Error with `cudaError` on failure. */
  malloc(device: number, byteSize: number): bigint;
  /** Page-locked, portable, mapped host memory. */
  mallocHost(byteSize: number): bigint;
  /** `cudaMallocManaged` of `byteSize` bytes, attached globally; throws an Error with `cudaError` on failure. */
  mallocManaged(device: number, byteSize: number): bigint;
  /**
   * Releases on the addon's release thread (these calls may synchronize the device):
   * kind 0 `cudaFree`, 1 `cudaFreeHost`, 2 `cudaHostUnregister`, 3 `cudaIpcCloseMemHandle` (memory from
   * `ipcOpenMemHandle`). With `after`, the thread first waits for that event and then destroys it (the
   * release is ordered after the captured work).
   */
  deferFree(kind: 0 | 1 | 2 | 3, address: bigint, after?: bigint): void;
  /** Deferred releases not yet done. */
  pendingReleases(): number;
  /** Page-locks existing host memory (portable, mapped). */
  hostRegister(address: bigint, byteSize: number): number;
  /** True when CUDA already knows `address` as page-locked host memory (cudaHostAlloc'd or registered). */
  isPinnedHost(address: bigint): boolean;
  /**
   * An ArrayBuffer over host-accessible memory (not owning it); throws an Error with code
   * `ERR_HS_NO_EXTERNAL_BUFFERS` where the runtime forbids external buffers.
   */
  externalArrayBuffer(address: bigint, byteSize: number): ArrayBuffer;
  /** Detaches a buffer (every view becomes empty); used before the memory behind it is freed. */
  detachArrayBuffer(buffer: ArrayBuffer): void;
  /** Address of the first byte of a buffer or view. */
  addressOf(view: ArrayBuffer | ArrayBufferView): bigint;
  /** `cudaMemcpyAsync` with `cudaMemcpyDefault`. */
  memcpyAsync(dst: bigint, src: bigint, byteLength: number, stream: bigint): number;

  // ---- peer copies (abiVersion 2; absent from older addons) ----
  /** `cudaDeviceCanAccessPeer`: 1 when work on `device` can reach `peer`'s memory (always for a device and itself), 0 when not, `-status` when CUDA refused. */
  deviceCanAccessPeer?(device: number, peer: number): number;
  /** `cudaDeviceEnablePeerAccess(peer)` with `device` current, once per ordered pair (already enabled counts as success); returns the CUDA status. */
  enablePeerAccess?(device: number, peer: number): number;
  /** `cudaMemcpyPeerAsync` of `byteLength` bytes from `src` on `srcDevice` to `dst` on `dstDevice`, on `stream`; returns the CUDA status. */
  memcpyPeerAsync?(dst: bigint, dstDevice: number, src: bigint, srcDevice: number, byteLength: number, stream: bigint): number;
  /** Two `cudaMemcpyAsync` on `stream`: `src` into the pinned `staging` buffer, then into `dst`; returns the CUDA status of the first that failed, or 0. */
  memcpyStagedAsync?(dst: bigint, src: bigint, staging: bigint, byteLength: number, stream: bigint): number;
  /** Fills `byteLength` bytes at `dst` with the byte `value` in stream order (`cudaMemsetAsync`); returns the CUDA status. */
  memsetAsync(dst: bigint, value: number, byteLength: number, stream: bigint): number;

  // ---- host callbacks ----
  /** Sets the JS function that receives host calls (once per thread). */
  setHostCallDispatcher(dispatch: (id: number) => void): void;
  /**
   * Enqueues `dispatch(id)` in stream order: it runs on the JS thread after the work before it. With
   * `blocking` the stream (CUDA's callback thread) waits until it returned; otherwise the stream goes on
   * at once. Keeps the event loop alive while calls are pending.
   */
  launchHostFunc(stream: bigint, id: number, blocking: boolean): number;
  /** Host calls enqueued with `launchHostFunc` or `notifyWhenDone` that have not run yet. */
  pendingHostCalls(): number;
  /**
   * Enqueues `dispatch(id)` for when everything enqueued on `stream` (of `device`) so far completed, without a
   * host function on the stream: an event recorded at its end, polled by the addon's waiter thread, which hands
   * `id` to the same queue as the host calls (so it runs after those enqueued on `stream` before it). A capturing
   * stream gets a non-blocking host call instead. Keeps the event loop alive while pending. abiVersion 3.
   */
  notifyWhenDone?(stream: bigint, device: number, id: number): number;
  /**
   * How the waiter thread polls: it yields between polls while the youngest request is younger than `spinNs`,
   * then sleeps age / `ageDivisor` between polls, clamped to [`minSleepNs`, `maxSleepNs`]. abiVersion 3.
   */
  setCompletionPolicy?(spinNs: number, minSleepNs: number, maxSleepNs: number, ageDivisor: number): void;
  /** Requests the waiter has not handed over yet, and its polls that found nothing complete. abiVersion 3. */
  completionWaiterStats?(): {
    /** Completions requested and not yet handed to the host-call queue. */
    readonly pending: number;
    /** Polls of the waiter thread that found nothing complete. */
    readonly idlePolls: number;
  };

  // ---- stream memory operations ----
  /** Writes a 64-bit value at `address` in stream order (returns a CUresult). */
  streamWriteValue64(stream: bigint, address: bigint, value: bigint): number;
  /** Makes the stream wait until the 64-bit value at `address` is >= `value` (returns a CUresult). */
  streamWaitValue64(stream: bigint, address: bigint, value: bigint): number;
  /** True when the driver entry points for 64-bit stream memory operations were found. */
  streamMemoryOpsSupported(): boolean;

  // ---- IPC ----
  /** 64-byte handle of `cudaMalloc` memory (the start of the allocation), for another process to open. */
  ipcGetMemHandle(address: bigint): Buffer;
  /**
   * Maps another process's `cudaMalloc` memory into this process on `device` (peer access enabled
   * lazily) and returns its address here. The exporting process must keep the memory alive until this
   * side closed it. Throws a TypeError unless `handle` is a 64-byte Buffer, an Error with `cudaError`
   * when CUDA refuses (the same process, a freed allocation).
   */
  ipcOpenMemHandle(device: number, handle: Buffer): bigint;
  /**
   * The whole allocation that holds `address` on `device` (`cuMemGetAddressRange`): its first byte and
   * its size in bytes. An importer checks the memory an IPC handle mapped against the size its peer
   * announced. Throws an Error with `cudaError` (a `CUresult`) when the driver refuses the address.
   */
  ipcMemRange(device: number, address: bigint): {
    /** First byte of the allocation, in this process. */
    base: bigint;
    /** Bytes of the allocation. */
    size: number;
  };
  /** Unmaps memory opened with `ipcOpenMemHandle`; returns the CUDA status. */
  ipcCloseMemHandle(address: bigint): number;
  /** 64-byte handle of an interprocess event (`eventCreate(device, true)`). */
  ipcGetEventHandle(event: bigint): Buffer;
  /**
   * Opens another process's interprocess event on `device`: record-free, it can be waited on
   * (`streamWaitEvent`) and queried here; close it with `eventDestroy`. Throws like `ipcOpenMemHandle`.
   */
  ipcOpenEventHandle(device: number, handle: Buffer): bigint;

  // ---- graphs ----
  /** Starts capturing the work enqueued on `stream` into a graph (`cudaStreamBeginCapture`); returns the CUDA status. */
  streamBeginCapture(stream: bigint): number;
  /** Ends the capture and returns the captured `cudaGraph_t`; throws an Error with `cudaError` on failure. */
  streamEndCapture(stream: bigint): bigint;
  /** Instantiates a captured graph into a `cudaGraphExec_t`; throws an Error with `cudaError` on failure. */
  graphInstantiate(graph: bigint): bigint;
  /** Launches an instantiated graph on `stream` (`cudaGraphLaunch`); returns the CUDA status. */
  graphLaunch(exec: bigint, stream: bigint): number;
  /** Destroys an instantiated graph; returns the CUDA status. */
  graphExecDestroy(exec: bigint): number;
  /** Destroys a captured graph; returns the CUDA status. */
  graphDestroy(graph: bigint): number;

  // ---- C ABI (native/include/hs/hs.h) ----
  /** Builds an `hs_tensor_v1` record (with its DLPack struct) for a downstream addon; returns its address. */
  exportTensorV1(descriptor: TensorV1Descriptor): bigint;
  /** The stream a downstream addon named with `hs_tensor_set_readiness_stream`, or 0n. */
  tensorV1ReadinessStream(record: bigint): bigint;
  /** Frees a record made by `exportTensorV1` (runs its DLPack deleter). */
  releaseTensorV1(record: bigint): void;

  // ---- memory pool diagnostics ----
  /**
   * The device's default memory pool: bytes it holds from the driver (`reserved`) and bytes of those
   * handed out (`used`). Throws an Error with `cudaError` when CUDA refuses.
   */
  memPoolUsage(ordinal: number): {
    /** Bytes the pool holds from the driver. */
    reserved: number;
    /** Bytes of those handed out to allocations. */
    used: number;
  };

  // ---- memory resources from downstream addons (hs_memory_resource_v1 in native/include/hs/hs.h) ----
  /**
   * Checks that `table` is a Node-API external tagged `HS_MEMORY_RESOURCE_TYPE_TAG`, validates the table
   * (struct_size, version, device_type, entry points) and copies it. Throws a TypeError for any other
   * value; an Error with `code` `ERR_HS_BAD_RESOURCE_TABLE` for an invalid table or one already open.
   */
  memoryResourceOpen(table: unknown): OpenedMemoryResource;
  /**
   * Calls the table's `allocate` (`bytes` > 0, `alignment` a power of two up to 2^30); the address lands
   * in `out[0]` (0n on failure). Returns a `ResourceStatus`: 0, the table's own code (1..4), or one of
   * hs's negative codes (a misaligned pointer was given back, a NULL pointer, a closed resource, ...).
   * @throws TypeError when `resource` is not from `memoryResourceOpen` or `out` is not a BigUint64Array.
   */
  memoryResourceAllocate(resource: object, bytes: number, alignment: number, out: BigUint64Array): number;
  /** `allocate_async` on the `cudaStream_t` `stream`; as `memoryResourceAllocate`. */
  memoryResourceAllocateAsync(resource: object, bytes: number, alignment: number, stream: bigint, out: BigUint64Array): number;
  /** Calls the table's `deallocate` with one allocation's address, bytes and alignment; returns a `ResourceStatus`. */
  memoryResourceDeallocate(resource: object, address: bigint, bytes: number, alignment: number): number;
  /** `deallocate_async` on the `cudaStream_t` `stream`; returns a `ResourceStatus`. */
  memoryResourceDeallocateAsync(resource: object, address: bigint, bytes: number, alignment: number, stream: bigint): number;
  /** Calls the table's `destroy` once (idempotent); later calls on `resource` return `ResourceStatus.Destroyed`. */
  memoryResourceClose(resource: object): void;
  /** Words for a `ResourceStatus`. */
  memoryResourceStatusName(status: number): string;

  // ---- kernels ----
  /** Registry names, by index. */
  kernelNames(): string[];
  /**
   * Per registry index: true for a host-staged kernel, which has no device launcher; the backend runs
   * the launch's host implementation in stream order on pinned copies of its ranges instead.
   */
  kernelHostStaged(): boolean[];
  /**
   * Launches kernel `index`: ranges are reads then writes (addresses and byte lengths). Throws a
   * RangeError for an unknown index or a host-staged kernel.
   */
  launchKernel(
    index: number,
    stream: bigint,
    addresses: BigUint64Array,
    byteLengths: Float64Array,
    readCount: number,
    writeCount: number,
    params: Float64Array,
    paramCount: number,
  ): number;
  /**
   * Appends another addon's kernels to this thread's registry (after the built-in ones): `table` is the
   * kernel table external of a kernels addon (`kernelTable()` of the test addon, `build/hs_cuda_test.node`).
   * Names already registered are skipped; returns how many were added. A `CudaBackend` created afterwards
   * finds them by name. Throws a TypeError for anything else.
   */
  addKernels(table: object): number;
}

/**
 * Native baselines for the GPU benchmark, timed in C++ (nanoseconds for the whole loop). They
 * synchronize streams on the calling thread: benchmarks only.
 */
export interface CudaNativeBenchBinding {
  /** `iterations` of cudaEventRecord + cudaStreamWaitEvent + cudaEventQuery over two non-blocking streams. */
  benchHops(iterations: number): number;
  /** `iterations` of cudaMallocAsync + cudaFreeAsync of `bytes` on one stream. */
  benchMallocAsync(bytes: number, iterations: number): number;
  /** `iterations` of cudaMalloc + cudaFree of `bytes`. */
  benchMalloc(bytes: number, iterations: number): number;
  /** `iterations` of cudaMemcpyAsync(`bytes`) + cudaStreamSynchronize. */
  benchMemcpy(dst: bigint, src: bigint, bytes: number, iterations: number): number;
  /**
   * Per iteration, ns from enqueuing a 4-byte cudaMemsetAsync to the host seeing it done: `mode` 0, a host
   * function after it records when it ran; 1, the calling thread spins on cudaEventQuery. abiVersion 3.
   */
  benchCompletion?(iterations: number, mode: 0 | 1): Float64Array;
}

/** What `exportTensorV1` puts into an `hs_tensor_v1` record and its DLPack `DLManagedTensorVersioned`. */
export interface TensorV1Descriptor {
  /** DLPack `data`: address of the allocation. */
  readonly address: bigint;
  /** DLPack `byte_offset`, bytes. */
  readonly byteOffset: number;
  /** Elements per dimension. */
  readonly shape: readonly number[];
  /** Elements between neighbours per dimension (same rank as `shape`). */
  readonly strides: readonly number[];
  /** DLPack `DLDataTypeCode` (0 int, 1 uint, 2 float, 4 bfloat, 5 complex, 6 bool). */
  readonly dtypeCode: number;
  /** Bits per lane. */
  readonly dtypeBits: number;
  /** Lanes per element; 1 for scalars. */
  readonly dtypeLanes: number;
  /** DLPack device type (1 CPU, 2 CUDA, 3 CUDA host, 13 CUDA managed). */
  readonly deviceType: number;
  /** Device ordinal; 0 for host memory. */
  readonly deviceId: number;
  /** Sets the DLPack read-only flag. */
  readonly readOnly: boolean;
  /** `cudaEvent_t` to wait on before reading, or 0n. */
  readonly readinessEvent: bigint;
  /** `cudaStream_t` the addon should work on. */
  readonly stream: bigint;
}

/** What `memoryResourceOpen` returns: hs's validated copy of a downstream addon's table and what it serves. */
export interface OpenedMemoryResource {
  /** Opaque handle for the `memoryResource*` calls (destroyed when closed or garbage-collected). */
  readonly resource: object;
  /** DLPack device type of the memory served: 1 pageable host, 2 CUDA device, 3 pinned host, 13 managed. */
  readonly deviceType: number;
  /** CUDA ordinal for device and managed memory; 0 for host memory. */
  readonly deviceId: number;
  /** True when the table has the stream-ordered pair `allocate_async`/`deallocate_async`. */
  readonly streamOrdered: boolean;
  /** The table's `name` (empty when it had none). */
  readonly name: string;
}

/**
 * Statuses of the `memoryResource*` calls: the table's own (`hs_resource_status`) and hs's negative ones.
 * @example
 * ```ts
 * import { ResourceStatus } from '@hs/cuda-native';
 *
 * // what a downstream resource table's allocate may answer, and hs's own refusals (negative)
 * const names = new Map(Object.entries(ResourceStatus).map(([name, code]) => [code, name]));
 * for (const status of [0, 1, -1]) console.log(`status ${status}: ${names.get(status as never) ?? 'unknown'}`);
 * ```
 */
export const ResourceStatus = Object.freeze({
  /** `HS_RESOURCE_OK`: the call succeeded. */
  Ok: 0,
  /** `HS_RESOURCE_OUT_OF_MEMORY`: a valid request the table could not satisfy; nothing allocated. */
  OutOfMemory: 1,
  /** `HS_RESOURCE_INVALID_ARGUMENT`: the table refused the request or pointer. */
  InvalidArgument: 2,
  /** `HS_RESOURCE_NOT_SUPPORTED`: an alignment or stream the table cannot serve. */
  NotSupported: 3,
  /** `HS_RESOURCE_FAILURE`: anything else (a driver error). */
  Failure: 4,
  /** The table returned a misaligned pointer; hs gave it back. */
  Misaligned: -1,
  /** The table reported success with a NULL pointer. */
  NullPointer: -2,
  /** The resource was closed. */
  Destroyed: -3,
  /** A stream-ordered call on a table without the stream-ordered pair. */
  NoStreamEntryPoints: -4,
  /** A misaligned pointer that the table then refused back (its leak, not hs's). */
  GiveBackFailed: -5,
  /** hs refused the arguments before calling the table. */
  BadArguments: -6,
  /** The table returned a status outside `hs_resource_status`. */
  UnknownStatus: -7,
});

/** What `runtimeInfo()` reports. */
export interface RuntimeInfo {
  /** `cudaRuntimeGetVersion`, e.g. 13000. */
  readonly runtimeVersion: number;
  /** `cudaDriverGetVersion`; 0 without a driver. */
  readonly driverVersion: number;
  /** Visible devices; 0 without a driver or GPU. */
  readonly deviceCount: number;
  /** Status of `cudaGetDeviceCount` (35 = no or too old a driver, 100 = no device). */
  readonly status: number;
  /** `cudaErrorName: description` of `status`. */
  readonly statusText: string;
}

/** What `deviceProperties()` reports. */
export interface DeviceProperties {
  /** Device ordinal, as passed to `deviceProperties()`. */
  readonly ordinal: number;
  /** Marketing name, for example `NVIDIA H200`. */
  readonly name: string;
  /** Bytes. */
  readonly totalGlobalMem: number;
  /** `major.minor`, e.g. `9.0`. */
  readonly computeCapability: string;
  /** Streaming multiprocessors. */
  readonly multiProcessorCount: number;
  /** PCI bus number of the device. */
  readonly pciBusId: number;
  /** True when stream-ordered allocation (`cudaMallocAsync`, memory pools) works on this device. */
  readonly memoryPoolsSupported: boolean;
  /** Bit mask of `cudaMemAllocationHandleType`. */
  readonly memoryPoolSupportedHandleTypes: number;
  /** True when interprocess events (`cudaIpcGetEventHandle`) work on this device. */
  readonly ipcEventSupported: boolean;
  /** True when host and device share one virtual address space. */
  readonly unifiedAddressing: boolean;
  /** True when `cudaMallocManaged` works on this device. */
  readonly managedMemory: boolean;
  /** True when host and device may access managed memory at the same time. */
  readonly concurrentManagedAccess: boolean;
  /** True when `cudaHostRegister` works on this device. */
  readonly hostRegisterSupported: boolean;
  /** Numerically largest (lowest) priority, usually 0. */
  readonly leastStreamPriority: number;
  /** Numerically smallest (highest) priority, e.g. -5. */
  readonly greatestStreamPriority: number;
}

/**
 * CUDA status codes the TypeScript side tests for.
 * @example
 * ```ts
 * import { CudaStatus, loadCudaNative } from '@hs/cuda-native';
 *
 * const cuda = loadCudaNative();
 * if (cuda.ok && cuda.hasDevice) {
 *   const stream = cuda.binding.streamCreate(0, 0);
 *   const status = cuda.binding.streamQuery(stream); // enqueue and query calls return a status, never throw
 *   console.log(status === CudaStatus.Success ? 'stream idle' : status === CudaStatus.NotReady ? 'work pending' : `cudaError ${status}`);
 *   cuda.binding.streamDestroy(stream);
 * } else console.log(`no device: ${cuda.ok ? cuda.deviceProblem : cuda.reason}`);
 * ```
 */
export const CudaStatus: {
  /** `cudaSuccess`. */
  readonly Success: 0;
  /** `cudaErrorInvalidValue`: an argument CUDA refused. */
  readonly InvalidValue: 1;
  /** `cudaErrorMemoryAllocation`: the device or host is out of memory. */
  readonly MemoryAllocation: 2;
  /** `cudaErrorInsufficientDriver`: no driver, or one older than the runtime (a machine without a GPU). */
  readonly InsufficientDriver: 35;
  /** `cudaErrorNoDevice`: a driver but no visible device. */
  readonly NoDevice: 100;
  /** `cudaErrorNotReady`: the queried stream or event still has pending work. */
  readonly NotReady: 600;
} = Object.freeze({
  Success: 0,
  InvalidValue: 1,
  MemoryAllocation: 2,
  InsufficientDriver: 35,
  NoDevice: 100,
  NotReady: 600,
});
