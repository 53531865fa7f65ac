import type { CudaNativeBinding } from '@hs/cuda-native';
import type { DeviceMemory, Event, EventOptions } from '../backend.js';
import type { IpcHandleOperations, IpcMemoryImport } from '../backend-capabilities.js';
import { disposedProblem } from '../backend-argument-checks.js';
import { deviceProblem } from '../allocation-request.js';
import type { Device } from '../device.js';
import { ErrorCode, OK_VOID, err, ok, type Err, type Result } from '../errors.js';
import { eventProblem, memoryProblem } from '../handle-checks.js';
import { CudaAllocationOrigin, type CudaEvent, type CudaMemory } from './cuda-handles.js';

/** Bytes of a `cudaIpcMemHandle_t` and of a `cudaIpcEventHandle_t`. */
const IPC_HANDLE_BYTES = 64;

/** What `CudaIpcHandles` needs of its backend: its devices, its state and its handle tables. */
export interface CudaIpcHost {
  readonly owner: object;
  readonly devices: readonly Device[];
  isDisposed(): boolean;
  /** Tracks a mapping of another process's allocation (released with `cudaIpcCloseMemHandle` on free). */
  trackImportedMemory(device: Device, address: bigint, byteSize: number, label: string): DeviceMemory;
  /** Tracks another process's event opened here (closed with `cudaEventDestroy` on destroyEvent). */
  trackImportedEvent(device: Device, handle: bigint, label: string): Event;
}

/** `IpcHandleOperations` of the CUDA backend: `cudaIpc{Get,Open}{Mem,Event}Handle` through the addon. */
export class CudaIpcHandles implements IpcHandleOperations {
  constructor(
    private readonly cuda: CudaNativeBinding,
    private readonly host: CudaIpcHost,
  ) {}

  exportMemory(memory: DeviceMemory): Result<Uint8Array> {
    const problem = disposedProblem(this.host.isDisposed(), 'ipc.exportMemory') ?? memoryProblem(this.host.owner, memory, 'ipc.exportMemory', 'the');
    if (problem !== null) return problem;
    const m = memory as CudaMemory;
    if (m.origin !== CudaAllocationOrigin.Malloc || m.address !== m.base) {
      return err(
        ErrorCode.InvalidArgument,
        `ipc.exportMemory: memory "${m.label}" is not a whole cudaDevice allocation of allocate() (CUDA IPC shares cudaMalloc allocations from their first byte; ` +
          'allocate it with kind cudaDevice and an alignment of at most 256)',
      );
    }
    try {
      return ok(new Uint8Array(this.cuda.ipcGetMemHandle(m.base)));
    } catch (cause) {
      return err(ErrorCode.DeviceError, `ipc.exportMemory: cudaIpcGetMemHandle refused "${m.label}": ${(cause as Error).message}`, cause);
    }
  }

  importMemory(request: IpcMemoryImport): Result<DeviceMemory> {
    if (typeof request !== 'object' || request === null) return err(ErrorCode.InvalidArgument, 'ipc.importMemory: expected { device, handle, byteSize }');
    const { device, handle, byteSize } = request;
    const label = request.label ?? 'imported CUDA IPC memory';
    const problem = disposedProblem(this.host.isDisposed(), 'ipc.importMemory') ?? deviceProblem(this.host.devices, device, 'ipc.importMemory') ?? handleProblem('ipc.importMemory', handle);
    if (problem !== null) return problem;
    if (!Number.isSafeInteger(byteSize) || byteSize <= 0) {
      return err(ErrorCode.InvalidArgument, `ipc.importMemory: byteSize must be a positive integer number of bytes, got ${String(byteSize)}`);
    }
    let address: bigint;
    try {
      address = this.cuda.ipcOpenMemHandle(device.id, Buffer.from(handle.buffer, handle.byteOffset, IPC_HANDLE_BYTES));
    } catch (cause) {
      return err(ErrorCode.DeviceError, `ipc.importMemory: cudaIpcOpenMemHandle refused the handle for "${label}" on ${device.toString()}: ${(cause as Error).message}`, cause);
    }
    // The handle maps the exporter's whole allocation: use no byte past its end, whatever the peer announced.
    const fits = this.#checkMappedSize(device, address, byteSize, label);
    if (!fits.ok) {
      this.cuda.ipcCloseMemHandle(address);
      return fits;
    }
    return ok(this.host.trackImportedMemory(device, address, byteSize, label));
  }

  /** `InvalidArgument` when the allocation mapped at `address` holds fewer than `byteSize` bytes from there. */
  #checkMappedSize(device: Device, address: bigint, byteSize: number, label: string): Result<void> {
    let range: { base: bigint; size: number };
    try {
      range = this.cuda.ipcMemRange(device.id, address);
    } catch (cause) {
      return err(ErrorCode.DeviceError, `ipc.importMemory: cuMemGetAddressRange cannot size the memory mapped for "${label}" on ${device.toString()}: ${(cause as Error).message}`, cause);
    }
    const available = range.size - Number(address - range.base);
    if (byteSize > available) {
      return err(
        ErrorCode.InvalidArgument,
        `ipc.importMemory: byteSize ${byteSize} exceeds the ${available} bytes of the exported allocation mapped for "${label}" on ${device.toString()} (cuMemGetAddressRange); nothing was mapped`,
      );
    }
    return OK_VOID;
  }

  exportEvent(event: Event): Result<Uint8Array> {
    const problem = disposedProblem(this.host.isDisposed(), 'ipc.exportEvent') ?? eventProblem(this.host.owner, event, 'ipc.exportEvent');
    if (problem !== null) return problem;
    const e = event as CudaEvent;
    if (!e.interprocess) {
      return err(ErrorCode.InvalidArgument, `ipc.exportEvent: event "${e.label}" was not created as interprocess; create it with createEvent(device, { interprocess: true })`);
    }
    try {
      return ok(new Uint8Array(this.cuda.ipcGetEventHandle(e.handle)));
    } catch (cause) {
      return err(ErrorCode.DeviceError, `ipc.exportEvent: cudaIpcGetEventHandle refused "${e.label}": ${(cause as Error).message}`, cause);
    }
  }

  importEvent(device: Device, handle: Uint8Array, options: EventOptions = {}): Result<Event> {
    const label = options.label ?? 'imported CUDA IPC event';
    const problem = disposedProblem(this.host.isDisposed(), 'ipc.importEvent') ?? deviceProblem(this.host.devices, device, 'ipc.importEvent') ?? handleProblem('ipc.importEvent', handle);
    if (problem !== null) return problem;
    let opened: bigint;
    try {
      opened = this.cuda.ipcOpenEventHandle(device.id, Buffer.from(handle.buffer, handle.byteOffset, IPC_HANDLE_BYTES));
    } catch (cause) {
      return err(ErrorCode.DeviceError, `ipc.importEvent: cudaIpcOpenEventHandle refused the handle for "${label}" on ${device.toString()}: ${(cause as Error).message}`, cause);
    }
    return ok(this.host.trackImportedEvent(device, opened, label));
  }
}

function handleProblem(method: string, handle: unknown): Err | null {
  if (!(handle instanceof Uint8Array) || handle.byteLength !== IPC_HANDLE_BYTES) {
    const got = handle instanceof Uint8Array ? `${handle.byteLength} bytes` : typeof handle;
    return err(ErrorCode.InvalidArgument, `${method}: a CUDA IPC handle is a ${IPC_HANDLE_BYTES}-byte Uint8Array, got ${got}`);
  }
  return null;
}
