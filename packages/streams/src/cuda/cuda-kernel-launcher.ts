import type { CudaNativeBinding } from '@hs/cuda-native';
import type { KernelLaunch, MemoryRange, Stream } from '../backend.js';
import { kernelRangesProblem } from '../backend-argument-checks.js';
import { ErrorCode, OK_VOID, err, type Result } from '../errors.js';
import { streamProblem } from '../handle-checks.js';
import { assertKernelShape } from '../kernel-launch-checks.js';
import type { CudaCopier } from './cuda-copier.js';
import { INVALID_VALUE, type CudaErrors } from './cuda-errors.js';
import type { CudaMemory, CudaStream } from './cuda-handles.js';
import type { CudaHostFunctions } from './cuda-host-functions.js';
import type { StagingBlock } from './pinned-staging.js';

/** Most ranges (reads or writes) and params a native kernel takes. */
const MAX_KERNEL_ARGS = 8;

/**
 * Kernel launch of the CUDA backend: kernels looked up by name in the addon's registry and launched with
 * the ranges' addresses and the params (filled into preallocated arrays, so a launch allocates nothing),
 * and host-staged registry entries (no device launcher) run as the launch's `host` function in stream
 * order on pinned copies of the ranges, whose writes are copied back.
 */
export class CudaKernelLauncher {
  private readonly kernelIndex = new Map<string, number>();
  /** Registry names of host-staged kernels (no device launcher; see `launchHostStaged`). */
  private readonly hostStagedKernels = new Set<string>();
  private readonly kernelAddresses = new BigUint64Array(2 * MAX_KERNEL_ARGS);
  private readonly kernelLengths = new Float64Array(2 * MAX_KERNEL_ARGS);
  private readonly kernelParams = new Float64Array(MAX_KERNEL_ARGS);

  constructor(
    private readonly cuda: CudaNativeBinding,
    private readonly errors: CudaErrors,
    /** The backend whose streams and memory are accepted. */
    private readonly owner: object,
    private readonly host: CudaHostFunctions,
    private readonly copier: CudaCopier,
    private readonly isDisposed: () => boolean,
  ) {
    const staged = cuda.kernelHostStaged();
    cuda.kernelNames().forEach((name, i) => {
      this.kernelIndex.set(name, i);
      if (staged[i] === true) this.hostStagedKernels.add(name);
    });
  }

  /** See `CudaBackend.launchKernel`. @throws HsError InvalidArgument when `kernel` is not a well-formed KernelLaunch. */
  launch(stream: Stream, kernel: KernelLaunch): Result<void> {
    assertKernelShape(kernel);
    const problem = streamProblem(this.owner, stream, 'launchKernel');
    if (problem !== null) return problem;
    const s = stream as CudaStream;
    const { reads, writes, params } = kernel;
    if (reads.length > MAX_KERNEL_ARGS || writes.length > MAX_KERNEL_ARGS || params.length > MAX_KERNEL_ARGS) {
      return err(ErrorCode.InvalidArgument, `launchKernel: ${kernel.name} has more than ${MAX_KERNEL_ARGS} reads, writes or params, which native kernels do not take`);
    }
    const ranges = kernelRangesProblem(this.owner, s, kernel);
    if (ranges !== null) return ranges;
    const addresses = this.kernelAddresses;
    const lengths = this.kernelLengths;
    for (let i = 0; i < reads.length; i++) {
      const r = reads[i] as MemoryRange;
      addresses[i] = (r.memory as CudaMemory).address + BigInt(r.byteOffset);
      lengths[i] = r.byteLength;
    }
    for (let i = 0; i < writes.length; i++) {
      const w = writes[i] as MemoryRange;
      addresses[reads.length + i] = (w.memory as CudaMemory).address + BigInt(w.byteOffset);
      lengths[reads.length + i] = w.byteLength;
    }
    const index = this.kernelIndex.get(kernel.name);
    if (index === undefined) {
      return err(
        ErrorCode.NotFound,
        `launchKernel: no CUDA kernel is registered as "${kernel.name}" (registered: ${[...this.kernelIndex.keys()].join(', ')}); add it to native/ or run on the host backend`,
      );
    }
    if (this.hostStagedKernels.has(kernel.name)) return this.launchHostStaged(s, kernel);
    for (let i = 0; i < params.length; i++) this.kernelParams[i] = params[i] as number;
    const status = this.cuda.launchKernel(index, s.handle, addresses, lengths, reads.length, writes.length, this.kernelParams, params.length);
    if (status === 0) return OK_VOID;
    if (status === INVALID_VALUE) {
      return err(ErrorCode.InvalidArgument, `launchKernel: ${kernel.name} refused its arguments (${reads.length} reads, ${writes.length} writes, params [${params.join(', ')}]); check the launch builder's contract`);
    }
    return this.errors.status(`launchKernel(${kernel.name})`, status);
  }

  /**
   * A host-staged kernel: copies every range into one pinned staging block, runs `host` on views of the
   * block in stream order (a blocking host function, so the write-back waits for it), then copies the
   * write ranges back. The launch's ranges and params are taken now.
   */
  private launchHostStaged(s: CudaStream, kernel: KernelLaunch): Result<void> {
    if (!this.host.blocking) {
      return err(ErrorCode.NotSupported, `launchKernel: ${kernel.name} runs on the host between copies, which needs blocking host functions (hostFunctions is 'queued')`);
    }
    const ranges = [...kernel.reads, ...kernel.writes];
    const params = kernel.params.slice();
    const host = kernel.host;
    const total = ranges.reduce((sum, r) => sum + r.byteLength, 0);
    const staging = this.copier.stagingOf(s.device);
    let block: StagingBlock;
    try {
      block = staging.acquire(Math.max(total, 1));
    } catch (cause) {
      return this.errors.thrown(`launchKernel(${kernel.name})`, cause);
    }
    const views: Uint8Array[] = [];
    const addresses: bigint[] = [];
    let offset = 0;
    let status = 0;
    for (const r of ranges) {
      const address = (r.memory as CudaMemory).address + BigInt(r.byteOffset);
      if (status === 0 && r.byteLength > 0) status = this.cuda.memcpyAsync(block.address + BigInt(offset), address, r.byteLength, s.handle);
      views.push(block.view.subarray(offset, offset + r.byteLength));
      addresses.push(address);
      offset += r.byteLength;
    }
    const reads = views.slice(0, kernel.reads.length);
    const writes = views.slice(kernel.reads.length);
    const launched =
      status === 0
        ? this.host.launchGated(s, `launchKernel(${kernel.name})`, () => {
            if (this.isDisposed()) return;
            try {
              host(reads, writes, params);
            } catch (cause) {
              this.host.recordFault(s, cause);
            }
          })
        : this.errors.status(`launchKernel(${kernel.name})`, status);
    for (let i = kernel.reads.length; launched.ok && status === 0 && i < ranges.length; i++) {
      const view = views[i] as Uint8Array;
      if (view.byteLength > 0) status = this.cuda.memcpyAsync(addresses[i] as bigint, block.address + BigInt(view.byteOffset), view.byteLength, s.handle);
    }
    staging.release(block, s.handle);
    if (!launched.ok) return launched;
    return status === 0 ? OK_VOID : this.errors.status(`launchKernel(${kernel.name})`, status);
  }
}
