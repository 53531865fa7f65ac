import type { CudaNativeBinding } from '@hs/cuda-native';
import type { MemoryRange, Stream } from '../backend.js';
import type { PeerCopyOperations, PeerCopyPath } from '../backend-capabilities.js';
import { peerCopyProblem } from '../backend-argument-checks.js';
import type { Device } from '../device.js';
import { ok, type Result } from '../errors.js';
import type { CudaErrors } from './cuda-errors.js';
import type { CudaStream } from './cuda-handles.js';

const SAME_DEVICE = ok<PeerCopyPath>('sameDevice');
const PEER = ok<PeerCopyPath>('peer');
const STAGED = ok<PeerCopyPath>('staged');

/** The native peer-copy entry points (abiVersion 2). */
type PeerBinding = Required<Pick<CudaNativeBinding, 'deviceCanAccessPeer' | 'enablePeerAccess' | 'memcpyPeerAsync' | 'memcpyStagedAsync' | 'memcpyAsync'>>;

/**
 * `PeerCopyOperations` of the CUDA backend: `cudaMemcpyAsync` within a device; between two devices
 * `cudaMemcpyPeerAsync` when `cudaDeviceCanAccessPeer` allows it (peer access enabled the first time a pair
 * is used), else two copies through the caller's pinned staging range, all on the destination's stream.
 * `canAccessPeer` asks CUDA once per ordered pair and remembers the answer.
 */
export class CudaPeerCopy implements PeerCopyOperations {
  /** `device * count + peer` -> 1 can access, 0 cannot, -1 not asked yet; 2 once peer access was enabled. */
  private readonly access: Int8Array;

  private constructor(
    private readonly cuda: PeerBinding,
    private readonly errors: CudaErrors,
    private readonly owner: { readonly devices: readonly Device[] },
  ) {
    const count = owner.devices.length;
    this.access = new Int8Array(count * count).fill(-1);
  }

  /** The capability, or undefined when the addon predates the peer-copy bindings. */
  static of(cuda: CudaNativeBinding, errors: CudaErrors, owner: { readonly devices: readonly Device[] }): CudaPeerCopy | undefined {
    const { deviceCanAccessPeer, enablePeerAccess, memcpyPeerAsync, memcpyStagedAsync } = cuda;
    if (deviceCanAccessPeer === undefined || enablePeerAccess === undefined || memcpyPeerAsync === undefined || memcpyStagedAsync === undefined) return undefined;
    return new CudaPeerCopy(cuda as PeerBinding, errors, owner);
  }

  canAccessPeer(device: Device, peer: Device): boolean {
    const devices = this.owner.devices;
    if (!devices.includes(device) || !devices.includes(peer)) return false;
    if (device === peer) return true;
    const at = device.id * devices.length + peer.id;
    let known = this.access[at] as number;
    if (known < 0) {
      known = this.cuda.deviceCanAccessPeer(device.id, peer.id) === 1 ? 1 : 0;
      this.access[at] = known;
    }
    return known > 0;
  }

  copyAsync(stream: Stream, dst: MemoryRange, src: MemoryRange, staging?: MemoryRange): Result<PeerCopyPath> {
    const problem = peerCopyProblem(this.owner, stream, dst, src, staging, this);
    if (problem !== null) return problem;
    const handle = (stream as CudaStream).handle;
    const n = dst.byteLength;
    const to = dst.memory.address + BigInt(dst.byteOffset);
    const from = src.memory.address + BigInt(src.byteOffset);
    const dstDevice = dst.memory.device;
    const srcDevice = src.memory.device;
    if (dstDevice === srcDevice) {
      const status = n === 0 ? 0 : this.cuda.memcpyAsync(to, from, n, handle);
      return status === 0 ? SAME_DEVICE : this.errors.status('peerCopy.copyAsync', status);
    }
    if (this.canAccessPeer(dstDevice, srcDevice)) {
      const at = dstDevice.id * this.owner.devices.length + srcDevice.id;
      if (this.access[at] !== 2) {
        const enabled = this.cuda.enablePeerAccess(dstDevice.id, srcDevice.id);
        if (enabled !== 0) return this.errors.status(`peerCopy.copyAsync (enabling peer access of ${dstDevice.toString()} to ${srcDevice.toString()})`, enabled);
        this.access[at] = 2;
      }
      const status = n === 0 ? 0 : this.cuda.memcpyPeerAsync(to, dstDevice.id, from, srcDevice.id, n, handle);
      return status === 0 ? PEER : this.errors.status('peerCopy.copyAsync', status);
    }
    const stage = staging as MemoryRange;
    const status = n === 0 ? 0 : this.cuda.memcpyStagedAsync(to, from, stage.memory.address + BigInt(stage.byteOffset), n, handle);
    return status === 0 ? STAGED : this.errors.status('peerCopy.copyAsync (staged)', status);
  }
}
