import type { OpenedMemoryResource } from '@hs/cuda-native';
import type { LoadedCudaAddon } from './cuda/load-cuda-binding.js';
import type { Backend, DeviceMemory, Stream } from './backend.js';
import type { NativeMemoryTable } from './backend-capabilities.js';
import { Device } from './device.js';
import { ErrorCode, OK_VOID, err, ok, type Err, type Result } from './errors.js';
import { MemoryKind } from './memory-kind.js';

/** DLPack device types an `hs_memory_resource_v1` table declares, as hs memory kinds. */
const KIND_OF_DEVICE_TYPE: ReadonlyMap<number, MemoryKind> = new Map([
  [1, MemoryKind.Host],
  [3, MemoryKind.PinnedHost],
  [2, MemoryKind.CudaDevice],
  [13, MemoryKind.CudaManaged],
]);

/** What the table keeps per live block: the native pointer and, for host-accessible memory, its host view's buffer. */
interface LiveBlock {
  readonly address: bigint;
  readonly buffer: ArrayBuffer | null;
}

/** The `cudaStream_t` of a stream of the opening backend, or the error; null where the backend has no native streams. */
export type NativeStreamOf = ((stream: Stream) => Result<bigint>) | null;

/**
 * `NativeMemoryTable` over `@hs/cuda-native`'s `memoryResource*` calls, for either backend: blocks are
 * adopted into `backend` (`adoptHostMemory` with an external ArrayBuffer over the C memory, or
 * `adoptDeviceMemory`). The stream-ordered pair is offered only where `nativeStreamOf` is given.
 */
export class AddonMemoryTable implements NativeMemoryTable {
  readonly kind: MemoryKind;
  readonly device: Device;
  readonly name: string;
  readonly streamOrdered: boolean;
  readonly #binding: LoadedCudaAddon['binding'];
  /** `ResourceStatus` of `@hs/cuda-native`. */
  readonly #status: LoadedCudaAddon['resourceStatus'];
  readonly #backend: Backend;
  readonly #opened: OpenedMemoryResource;
  readonly #nativeStreamOf: NativeStreamOf;
  readonly #live = new Map<DeviceMemory, LiveBlock>();
  /** Receives the address of each allocation (no allocation per call). */
  readonly #out = new BigUint64Array(1);
  #closed = false;

  private constructor(addon: LoadedCudaAddon, backend: Backend, opened: OpenedMemoryResource, kind: MemoryKind, device: Device, nativeStreamOf: NativeStreamOf) {
    this.#binding = addon.binding;
    this.#status = addon.resourceStatus;
    this.#backend = backend;
    this.#opened = opened;
    this.kind = kind;
    this.device = device;
    this.name = opened.name;
    this.#nativeStreamOf = nativeStreamOf;
    this.streamOrdered = opened.streamOrdered && nativeStreamOf !== null;
  }

  /** Validates `table` through the addon and checks that `backend` can adopt its memory (else destroys it). Errors as `Backend.openNativeMemoryTable`. */
  static open(addon: LoadedCudaAddon, backend: Backend, table: unknown, nativeStreamOf: NativeStreamOf): Result<AddonMemoryTable> {
    const binding = addon.binding;
    let opened: OpenedMemoryResource;
    try {
      opened = binding.memoryResourceOpen(table);
    } catch (cause) {
      return err(ErrorCode.InvalidArgument, `openNativeMemoryTable: ${(cause as Error).message}`, cause);
    }
    const kind = KIND_OF_DEVICE_TYPE.get(opened.deviceType) as MemoryKind;
    const device = kind === MemoryKind.Host || kind === MemoryKind.PinnedHost ? Device.cpu() : Device.cuda(opened.deviceId);
    const unsuitable = adoptionProblem(backend, kind, device, opened.name === '' ? 'the table' : `table "${opened.name}"`);
    if (unsuitable !== null) {
      binding.memoryResourceClose(opened.resource);
      return unsuitable;
    }
    return ok(new AddonMemoryTable(addon, backend, opened, kind, device, nativeStreamOf));
  }

  get liveBlocks(): number {
    return this.#live.size;
  }

  owns(memory: DeviceMemory): boolean {
    return this.#live.has(memory);
  }

  allocate(bytes: number, alignment: number, label: string): Result<DeviceMemory> {
    if (this.#closed) return this.closedError();
    const status = this.#binding.memoryResourceAllocate(this.#opened.resource, bytes, alignment, this.#out);
    return this.adopt(status, bytes, alignment, label, null);
  }

  allocateAsync(bytes: number, alignment: number, stream: Stream, label: string): Result<DeviceMemory> {
    if (this.#closed) return this.closedError();
    const native = this.streamHandle(stream);
    if (!native.ok) return native;
    const status = this.#binding.memoryResourceAllocateAsync(this.#opened.resource, bytes, alignment, native.value, this.#out);
    return this.adopt(status, bytes, alignment, label, native.value);
  }

  deallocate(memory: DeviceMemory, bytes: number, alignment: number): Result<void> {
    const live = this.retire(memory);
    if (!live.ok) return live;
    // The memory goes back to the table even when the backend refuses to retire the handle (disposed).
    const freed = this.#backend.free(memory);
    const status = this.#binding.memoryResourceDeallocate(this.#opened.resource, live.value.address, bytes, alignment);
    return freed.ok ? this.statusResult(status) : freed;
  }

  deallocateAsync(memory: DeviceMemory, bytes: number, alignment: number, stream: Stream): Result<void> {
    const native = this.streamHandle(stream);
    if (!native.ok) return native;
    const live = this.retire(memory);
    if (!live.ok) return live;
    const freed = this.#backend.freeAsync(memory, stream);
    const status = this.#binding.memoryResourceDeallocateAsync(this.#opened.resource, live.value.address, bytes, alignment, native.value);
    return freed.ok ? this.statusResult(status) : freed;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#binding.memoryResourceClose(this.#opened.resource);
  }

  private closedError(): Err {
    return err(ErrorCode.InvalidState, 'the native table was closed (its destroy ran)');
  }

  /** The native stream of a live stream of the opening backend on this table's device. */
  private streamHandle(stream: Stream): Result<bigint> {
    if (this.#nativeStreamOf === null || !this.#opened.streamOrdered) {
      return err(ErrorCode.NotSupported, 'the native table has no stream-ordered pair on this backend (allocate_async/deallocate_async need a table that has them and the CUDA backend)');
    }
    const native = this.#nativeStreamOf(stream);
    if (!native.ok) return native;
    if (stream.device !== this.device) {
      return err(ErrorCode.InvalidArgument, `the stream is on ${stream.device.toString()} but the native table serves ${this.device.toString()}`);
    }
    return native;
  }

  /** Forgets a live block (detaching its host view) and returns what the table needs to free it. */
  private retire(memory: DeviceMemory): Result<LiveBlock> {
    const live = this.#live.get(memory);
    if (live === undefined) return err(ErrorCode.InvalidArgument, `memory "${memory.label}" was not handed out by this native table, or was already given back`);
    this.#live.delete(memory);
    if (live.buffer !== null) this.#binding.detachArrayBuffer(live.buffer);
    return ok(live);
  }

  /**
   * Turns the result of an allocate call into backend memory. On any failure after the table allocated,
   * the pointer goes back through the matching deallocate (`stream` non-null: the stream-ordered one).
   */
  private adopt(status: number, bytes: number, alignment: number, label: string, stream: bigint | null): Result<DeviceMemory> {
    if (status !== this.#status.Ok) return this.statusResult(status, bytes, alignment) as Err;
    const address = this.#out[0] as bigint;
    let buffer: ArrayBuffer | null = null;
    let adopted: Result<DeviceMemory>;
    if (this.kind === MemoryKind.CudaDevice) {
      adopted = (this.#backend.adoptDeviceMemory as NonNullable<Backend['adoptDeviceMemory']>)({ device: this.device, address, byteSize: bytes, label });
    } else {
      try {
        buffer = this.#binding.externalArrayBuffer(address, bytes);
        adopted = (this.#backend.adoptHostMemory as NonNullable<Backend['adoptHostMemory']>)({ bytes: new Uint8Array(buffer), kind: this.kind, address, label });
      } catch (cause) {
        adopted = err(ErrorCode.NotSupported, `this runtime gives no host view of native memory (${(cause as Error).message})`, cause);
      }
    }
    if (!adopted.ok) {
      if (buffer !== null) this.#binding.detachArrayBuffer(buffer);
      if (stream === null) this.#binding.memoryResourceDeallocate(this.#opened.resource, address, bytes, alignment);
      else this.#binding.memoryResourceDeallocateAsync(this.#opened.resource, address, bytes, alignment, stream);
      return adopted;
    }
    this.#live.set(adopted.value, { address, buffer });
    return adopted;
  }

  /** OK_VOID for status 0, else the typed error naming what the table did. */
  private statusResult(status: number, bytes?: number, alignment?: number): Result<void> {
    if (status === this.#status.Ok) return OK_VOID;
    const request = bytes === undefined ? '' : ` for ${bytes} bytes aligned to ${String(alignment)}`;
    const what = `the native table ${this.#binding.memoryResourceStatusName(status)} (status ${status})${request}`;
    switch (status) {
      case this.#status.OutOfMemory:
        return err(ErrorCode.OutOfMemory, `${what}; nothing was allocated`);
      case this.#status.InvalidArgument:
      case this.#status.BadArguments:
        return err(ErrorCode.InvalidArgument, what);
      case this.#status.NotSupported:
      case this.#status.NoStreamEntryPoints:
        return err(ErrorCode.NotSupported, what);
      case this.#status.Destroyed:
        return err(ErrorCode.InvalidState, what);
      case this.#status.Misaligned:
      case this.#status.NullPointer:
      case this.#status.GiveBackFailed:
      case this.#status.UnknownStatus:
        return err(ErrorCode.ProtocolError, `${what}; the addon's allocator breaks the hs_memory_resource_v1 contract`);
      default:
        return err(ErrorCode.DeviceError, what);
    }
  }
}

/** Null when `backend` can adopt blocks of `kind` on `device`; otherwise the NotSupported to return. */
function adoptionProblem(backend: Backend, kind: MemoryKind, device: Device, table: string): Err | null {
  if (kind === MemoryKind.CudaManaged) {
    return err(ErrorCode.NotSupported, `openNativeMemoryTable: ${table} serves cudaManaged memory, which native tables cannot provide yet; serve cudaDevice or host memory`);
  }
  if (kind === MemoryKind.CudaDevice) {
    if (typeof backend.adoptDeviceMemory !== 'function' || !backend.devices.includes(device)) {
      return err(
        ErrorCode.NotSupported,
        `openNativeMemoryTable: ${table} serves cudaDevice memory on ${device.toString()}, which this ${backend.name} backend cannot use; open it on a CudaBackend with that device`,
      );
    }
    return null;
  }
  if (typeof backend.adoptHostMemory !== 'function') {
    return err(ErrorCode.NotSupported, `openNativeMemoryTable: ${table} serves ${kind} memory, but this ${backend.name} backend cannot adopt host memory (no adoptHostMemory)`);
  }
  return null;
}
