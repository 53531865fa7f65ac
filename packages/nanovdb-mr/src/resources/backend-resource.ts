import {
  OK_VOID,
  ok,
  err,
  ErrorCode,
  HsError,
  type Backend,
  type Device,
  type MemoryKind,
  type Ok,
  type Result,
  isDeviceAccessible,
  isHostAccessible,
} from '@hs/streams';
import { recordAlignment, requestProblem, returnProblem } from '../allocation-checks.js';
import { DEFAULT_ALIGNMENT, type MemoryBlock, type SyncResource } from '../resource.js';

/** The shared success of every 0-byte request: no block, nothing allocated. */
export const OK_NULL_BLOCK: Ok<null> = Object.freeze({ ok: true as const, value: null });

/**
 * A synchronous resource that takes each block from a `Backend` as one allocation of one memory kind on
 * one device (`Backend.allocate`/`Backend.free`). The concrete resources (`HostResource`,
 * `PinnedResource`, `MallocResource`, `ManagedResource`, `DeviceResource`) are this with a fixed kind.
 * A resource is a cheap handle: copying the reference shares it; it owns no state beyond the backend's.
 *
 * `allocate(0)` gives `null` and touches nothing. Errors are the backend's: `OutOfMemory`,
 * `InvalidArgument` (bad size or alignment, a device that does not suit the kind), `InvalidState` (the
 * backend was disposed, a block already returned).
 * Spec: "Resource (allocator)", synchronous tier.
 * @example
 * ```ts
 * import { Device, HostBackend, MemoryKind, unwrap } from '@hs/streams';
 * import { BackendResource } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * // any memory kind on a device of the backend, one backend allocation per block (the concrete resources fix the kind)
 * const staging = new BackendResource(backend, MemoryKind.CudaManaged, Device.cuda(0), 'staging');
 * const block = unwrap(staging.allocate(1 << 16, 4096));
 * console.log(`${staging.label}: ${block?.byteLength} bytes, host-accessible ${staging.hostAccessible}, device-accessible ${staging.deviceAccessible}`);
 * unwrap(staging.deallocate(block, 1 << 16, 4096));
 * ```
 */
export class BackendResource implements SyncResource {
  /** The backend every block comes from. */
  readonly backend: Backend;
  /** Memory kind of every block. */
  readonly kind: MemoryKind;
  /** Device of every block (`Device.cpu()` for host and pinned memory). */
  readonly device: Device;
  /** True for host, pinnedHost and cudaManaged memory. */
  readonly hostAccessible: boolean;
  /** True for pinnedHost, cudaDevice and cudaManaged memory. */
  readonly deviceAccessible: boolean;
  /** Name used in error messages and allocation labels. */
  readonly label: string;

  /** @throws HsError InvalidArgument when `backend` is not a Backend. */
  constructor(backend: Backend, kind: MemoryKind, device: Device, label: string) {
    if (typeof backend !== 'object' || backend === null || typeof backend.allocate !== 'function') {
      throw new HsError(ErrorCode.InvalidArgument, `${label}: expected a Backend (for example new HostBackend())`);
    }
    this.backend = backend;
    this.kind = kind;
    this.device = device;
    this.hostAccessible = isHostAccessible(kind);
    this.deviceAccessible = isDeviceAccessible(kind);
    this.label = label;
  }

  /** Allocates `bytes` bytes aligned to `alignment` (default 256) as one backend allocation; `null` for 0 bytes. */
  allocate(bytes: number, alignment: number = DEFAULT_ALIGNMENT): Result<MemoryBlock | null> {
    const problem = requestProblem(`${this.label}.allocate`, bytes, alignment);
    if (problem !== null) return problem;
    if (bytes === 0) return OK_NULL_BLOCK;
    const made = this.backend.allocate({ kind: this.kind, device: this.device, byteSize: bytes, alignment, label: `${this.label} block` });
    return made.ok ? ok(this.blockOf(made.value, alignment)) : made;
  }

  /** Frees a block from `allocate`; `null` with 0 bytes is a no-op. The block must be quiescent. */
  deallocate(block: MemoryBlock | null, bytes: number, alignment: number = DEFAULT_ALIGNMENT): Result<void> {
    const problem = this.returnCheck(`${this.label}.deallocate`, block, bytes, alignment);
    if (problem !== null) return problem;
    return block === null ? OK_VOID : this.backend.free(block.memory);
  }

  /** A block spanning all of `memory`, allocated with `alignment` (remembered for the deallocation check). */
  protected blockOf(memory: MemoryBlock['memory'], alignment: number): MemoryBlock {
    recordAlignment(memory, alignment);
    return { memory, byteOffset: 0, byteLength: memory.byteSize, label: memory.label };
  }

  /** Null when `block` may be returned to this resource with `bytes` and `alignment`; otherwise the error. */
  protected returnCheck(who: string, block: MemoryBlock | null, bytes: number, alignment: number): Result<never> | null {
    const problem = requestProblem(who, bytes, alignment) ?? returnProblem(who, block, bytes, alignment);
    if (problem !== null || block === null) return problem;
    if (block.byteOffset !== 0 || block.memory.kind !== this.kind || block.memory.device !== this.device) {
      return err(ErrorCode.InvalidArgument, `${who}: block "${block.label}" was not allocated by this ${this.label}`);
    }
    return null;
  }
}
