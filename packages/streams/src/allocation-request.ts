import type { AllocationRequest, HostMemoryAdoption } from './backend.js';
import { Device } from './device.js';
import { ErrorCode, HsError, err, ok, type Err, type Result } from './errors.js';
import { MEMORY_KINDS, MemoryKind, parseMemoryKind, requiresCudaDevice } from './memory-kind.js';

/** Default allocation alignment, bytes. */
export const DEFAULT_ALIGNMENT = 256;
/** Largest accepted allocation alignment, bytes (1 GiB). */
export const MAX_ALIGNMENT = 2 ** 30;

/** An `AllocationRequest` after validation, defaults applied. */
export interface ValidAllocation {
  readonly kind: MemoryKind;
  readonly device: Device;
  /** Bytes, a positive safe integer. */
  readonly byteSize: number;
  /** Bytes, a power of two from 1 to `MAX_ALIGNMENT`. */
  readonly alignment: number;
}

/** Printable name of a device argument (which may be of the wrong type). */
export function describeDevice(device: unknown): string {
  return device instanceof Device ? device.toString() : String(device);
}

/** Null when `device` is one of `devices`, else InvalidArgument naming the backend's devices. */
export function deviceProblem(devices: readonly Device[], device: Device, method: string): Err | null {
  if (devices.includes(device)) return null;
  const known = devices.length === 0 ? 'none (deviceCount is 0)' : devices.map(String).join(', ');
  return err(ErrorCode.InvalidArgument, `${method}: ${describeDevice(device)} is not a CUDA device of this backend; its devices are ${known}`);
}

/**
 * Checks an allocation request the same way on every backend: a known kind; one of `devices` for CUDA
 * kinds and `Device.cpu()` for host kinds; a positive safe-integer size; a power-of-two alignment up to
 * 1 GiB (default 256). Errors: InvalidArgument, with a message saying what to pass instead.
 * @throws HsError InvalidArgument when `request` is not an object.
 */
export function validateAllocationRequest(request: AllocationRequest, devices: readonly Device[]): Result<ValidAllocation> {
  if (typeof request !== 'object' || request === null) {
    throw new HsError(ErrorCode.InvalidArgument, 'allocate: expected an AllocationRequest { kind, device, byteSize, alignment?, label? }');
  }
  const { device, byteSize, alignment = DEFAULT_ALIGNMENT } = request;
  const kind = parseMemoryKind(String(request.kind));
  if (kind === undefined) {
    return err(ErrorCode.InvalidArgument, `allocate: unknown memory kind "${String(request.kind)}"; use one of ${MEMORY_KINDS.join(', ')}`);
  }
  if (requiresCudaDevice(kind)) {
    const problem = deviceProblem(devices, device, `allocate(${kind})`);
    if (problem !== null) return problem;
  } else if (device !== Device.cpu()) {
    return err(ErrorCode.InvalidArgument, `allocate: ${kind} memory belongs to the cpu device; pass Device.cpu(), got ${describeDevice(device)}`);
  }
  if (!Number.isSafeInteger(byteSize) || byteSize <= 0) {
    return err(ErrorCode.InvalidArgument, `allocate: byteSize must be a positive integer number of bytes, got ${String(byteSize)}`);
  }
  if (!Number.isSafeInteger(alignment) || alignment <= 0 || alignment > MAX_ALIGNMENT || !Number.isInteger(Math.log2(alignment))) {
    return err(ErrorCode.InvalidArgument, `allocate: alignment must be a power of two from 1 to ${MAX_ALIGNMENT} bytes, got ${String(alignment)}`);
  }
  return ok({ kind, device, byteSize, alignment });
}

/** Null when `request` names a non-empty Uint8Array and the host or pinnedHost kind (`Backend.adoptHostMemory`); else InvalidArgument. */
export function hostAdoptionProblem(request: HostMemoryAdoption): Err | null {
  const { bytes, kind } = request;
  if (!(bytes instanceof Uint8Array) || bytes.byteLength === 0) {
    return err(ErrorCode.InvalidArgument, 'adoptHostMemory: bytes must be a non-empty Uint8Array');
  }
  if (kind !== MemoryKind.Host && kind !== MemoryKind.PinnedHost) {
    return err(ErrorCode.InvalidArgument, `adoptHostMemory: only host and pinnedHost memory can be adopted, got ${String(kind)}`);
  }
  return null;
}
