import type { MemoryRange, Stream } from '../backend.js';
import type { PeerCopyOperations, PeerCopyPath } from '../backend-capabilities.js';
import { peerCopyProblem } from '../backend-argument-checks.js';
import type { Device } from '../device.js';
import { ok, type Result } from '../errors.js';
import type { HostStream } from './host-stream.js';
import type { HostStreamWork } from './host-stream-work.js';

const SAME_DEVICE = ok<PeerCopyPath>('sameDevice');
const PEER = ok<PeerCopyPath>('peer');
const STAGED = ok<PeerCopyPath>('staged');

/**
 * The host backend's peer copies: a copy between its emulated devices, queued on the destination's stream
 * like `memcpyAsync` (so the ordering checker sees the read of `src` and the write of `dst`). Without peer
 * access (`HostBackendOptions.peerAccess: false`) a copy between two devices goes through the staging range:
 * `src` into it, then it into `dst`, both on `stream`.
 */
export class HostPeerCopy implements PeerCopyOperations {
  constructor(
    private readonly owner: { readonly devices: readonly Device[] },
    private readonly work: HostStreamWork,
    private readonly peerAccess: boolean,
  ) {}

  canAccessPeer(device: Device, peer: Device): boolean {
    const devices = this.owner.devices;
    if (!devices.includes(device) || !devices.includes(peer)) return false;
    return device === peer || this.peerAccess;
  }

  copyAsync(stream: Stream, dst: MemoryRange, src: MemoryRange, staging?: MemoryRange): Result<PeerCopyPath> {
    const problem = peerCopyProblem(this.owner, stream, dst, src, staging, this);
    if (problem !== null) return problem;
    const s = stream as HostStream;
    const same = dst.memory.device === src.memory.device;
    if (same || this.peerAccess) {
      this.work.memcpy(s, dst, src);
      return same ? SAME_DEVICE : PEER;
    }
    const stage = staging as MemoryRange;
    const slice = stage.byteLength === src.byteLength ? stage : { memory: stage.memory, byteOffset: stage.byteOffset, byteLength: src.byteLength, label: stage.label };
    this.work.memcpy(s, slice, src);
    this.work.memcpy(s, dst, slice);
    return STAGED;
  }
}
