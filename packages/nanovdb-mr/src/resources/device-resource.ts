import { ErrorCode, HsError, MemoryKind, OK_VOID, err, ok, type Backend, type Device, type Result, type Stream } from '@hs/streams';
import { requestProblem } from '../allocation-checks.js';
import { DEFAULT_ALIGNMENT, type AsyncResource, type MemoryBlock } from '../resource.js';
import { BackendResource, OK_NULL_BLOCK } from './backend-resource.js';

/**
 * Device memory from the device's stream-ordered memory pool (`MemoryKind.CudaDevice`,
 * `cudaMallocAsync`/`cudaFreeAsync` through `Backend.allocateAsync`/`freeAsync`): all four methods,
 * default alignment 256 bytes. The synchronous pair allocates memory valid on every stream at once
 * (`Backend.allocate`) and frees quiescent blocks.
 *
 * On a device without memory-pool support (`Backend.supportsMemoryPools(device)` false) every
 * allocation fails with `NotSupported` and a message naming the opt-in; there is no silent fallback.
 * Other errors: `OutOfMemory`, `InvalidArgument` (bad size, alignment, a stream of another device),
 * `InvalidState` (destroyed stream, block already returned).
 * Spec: "Resource (allocator)" (cuda::DeviceResource), and the pool-less acceptance criterion of B4.
 *
 * @example
 * ```ts
 * import { Device, HostBackend, unwrap } from '@hs/streams';
 * import { DeviceResource } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const stream = unwrap(backend.createStream(Device.cuda(0)));
 * const device = new DeviceResource(backend, Device.cuda(0));
 * const block = unwrap(device.allocateAsync(1 << 20, 256, stream)); // usable by work enqueued on `stream` from now on
 * if (block !== null) unwrap(backend.memsetAsync(stream, block, 0));
 * unwrap(device.deallocateAsync(block, 1 << 20, 256, stream)); // returns to the pool after the memset
 * await backend.synchronizeStream(stream);
 * const poolless = new DeviceResource(new HostBackend({ memoryPools: false }), Device.cuda(0));
 * const refused = poolless.allocate(1 << 20, 256);
 * if (!refused.ok) console.log(refused.error.code); // NotSupported, never a silent fallback
 * unwrap(backend.destroyStream(stream));
 * ```
 */
export class DeviceResource extends BackendResource implements AsyncResource {
  /** @throws HsError InvalidArgument when `backend` is not a Backend or `device` is not a CUDA device. */
  constructor(backend: Backend, device: Device) {
    if (!device?.isCuda) throw new HsError(ErrorCode.InvalidArgument, `DeviceResource: needs a CUDA device such as Device.cuda(0), got ${String(device)}`);
    super(backend, MemoryKind.CudaDevice, device, 'DeviceResource');
  }

  /** Synchronous allocation (valid on every stream at once); NotSupported on a pool-less device. */
  override allocate(bytes: number, alignment: number = DEFAULT_ALIGNMENT): Result<MemoryBlock | null> {
    return this.poolProblem() ?? super.allocate(bytes, alignment);
  }

  /**
   * Stream-ordered allocation on `stream` (which must be on this resource's device); `null` for 0 bytes.
   * NotSupported on a pool-less device.
   */
  allocateAsync(bytes: number, alignment: number, stream: Stream): Result<MemoryBlock | null> {
    const problem = this.poolProblem() ?? requestProblem('DeviceResource.allocateAsync', bytes, alignment);
    if (problem !== null) return problem;
    if (bytes === 0) return OK_NULL_BLOCK;
    const made = this.backend.allocateAsync(
      { kind: MemoryKind.CudaDevice, device: this.device, byteSize: bytes, alignment, label: 'DeviceResource block' },
      stream,
    );
    return made.ok ? ok(this.blockOf(made.value, alignment)) : made;
  }

  /** Stream-ordered free on `stream`: the block returns to the pool after the work enqueued on `stream` so far. */
  deallocateAsync(block: MemoryBlock | null, bytes: number, alignment: number, stream: Stream): Result<void> {
    const problem = this.returnCheck('DeviceResource.deallocateAsync', block, bytes, alignment);
    if (problem !== null) return problem;
    if (block === null) return OK_VOID;
    return this.backend.freeAsync(block.memory, stream);
  }

  private poolProblem(): Result<never> | null {
    if (this.backend.supportsMemoryPools(this.device)) return null;
    return err(
      ErrorCode.NotSupported,
      `DeviceResource: ${this.device.toString()} has no stream-ordered memory-pool support; opt into synchronous device malloc with new AsyncFromSync(backend, new MallocResource(backend, device)) (its deallocateAsync waits for the stream)`,
    );
  }
}
