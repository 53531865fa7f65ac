import type { CudaNativeBinding } from '@hs/cuda-native';

/** What `CudaBackend.hostArrayRegistrations()` reports. */
export interface HostArrayRegistrationStats {
  /** JS ArrayBuffers page-locked now. */
  readonly arrays: number;
  /** Their bytes. */
  readonly bytes: number;
  /** Nanoseconds spent in `cudaHostRegister` since the backend was created (the one-time cost, kept out of the copies). */
  readonly registerNs: number;
  /** Arrays `cudaHostRegister` refused (they stay staged through pinned memory). */
  readonly refused: number;
}

/** When a JS array that receives device-to-host copies is page-locked; see `CudaBackendOptions.hostArrayRegistration`. */
export interface HostArrayRegistrationPolicy {
  readonly minBytes: number;
  readonly copies: number;
}

/** Default policy: arrays of at least 4 MiB, registered at their second copy (a repeat copy into the same array). */
export const DEFAULT_HOST_ARRAY_REGISTRATION: HostArrayRegistrationPolicy = { minBytes: 4 << 20, copies: 2 };

interface Registration {
  readonly address: bigint;
  readonly byteLength: number;
}

/**
 * The JS ArrayBuffers the CUDA backend page-locked (`cudaHostRegister`, the whole buffer) so device-to-host
 * copies land in them directly instead of through pinned staging and a copy on the JS thread. A buffer is
 * registered when it receives its `policy.copies`-th copy, is at least `policy.minBytes` long (resizable and
 * growable buffers never are) and has no staged copy whose JS-thread write is still to come; the registration ends at `release` (after the work enqueued on every stream),
 * at `dispose`, or when the buffer is garbage-collected (the copier keeps a destination alive until its copy ran,
 * so a collected buffer has no copy in flight). Nothing here holds a buffer: entries are keyed weakly.
 */
export class HostArrayRegistrations {
  private readonly byBuffer = new WeakMap<ArrayBufferLike, Registration>();
  private readonly copiesSeen = new WeakMap<ArrayBufferLike, number>();
  private readonly refusedBuffers = new WeakSet<ArrayBufferLike>();
  /** Staged copies into a buffer whose JS-thread write has not run yet: a direct copy must not overtake them. */
  private readonly stagedInFlight = new WeakMap<ArrayBufferLike, number>();
  private readonly live = new Set<Registration>();
  private readonly collected = new FinalizationRegistry<Registration>((r) => this.forget(r) && this.cuda.deferFree(2, r.address));
  private liveBytes = 0;
  private registerNs = 0;
  private refused = 0;

  constructor(
    private readonly cuda: CudaNativeBinding,
    private readonly policy: HostArrayRegistrationPolicy | null,
  ) {}

  /**
   * The page-locked address of `bytes[0]` when its buffer is registered (registering it now when the policy says
   * so), or 0n: the copy is then staged.
   */
  addressFor(bytes: Uint8Array): bigint {
    const buffer = bytes.buffer;
    const known = this.byBuffer.get(buffer);
    if (known !== undefined) return known.address + BigInt(bytes.byteOffset);
    const policy = this.policy;
    if (policy === null || bytes.byteLength === 0 || buffer.byteLength < policy.minBytes || this.refusedBuffers.has(buffer) || isResizable(buffer)) return 0n;
    const seen = (this.copiesSeen.get(buffer) ?? 0) + 1;
    if (seen < policy.copies || this.stagedInFlight.has(buffer)) {
      this.copiesSeen.set(buffer, seen);
      return 0n;
    }
    this.copiesSeen.delete(buffer);
    const address = this.cuda.addressOf(bytes) - BigInt(bytes.byteOffset);
    // Memory someone else page-locked stays theirs: its lifetime is not this table's to end.
    if (this.cuda.isPinnedHost(address)) {
      this.refusedBuffers.add(buffer);
      return 0n;
    }
    const t0 = process.hrtime.bigint();
    const status = this.cuda.hostRegister(address, buffer.byteLength);
    this.registerNs += Number(process.hrtime.bigint() - t0);
    if (status !== 0) {
      this.refused++;
      this.refusedBuffers.add(buffer);
      return 0n;
    }
    const registration: Registration = { address, byteLength: buffer.byteLength };
    this.byBuffer.set(buffer, registration);
    this.live.add(registration);
    this.liveBytes += registration.byteLength;
    this.collected.register(buffer, registration, registration);
    return address + BigInt(bytes.byteOffset);
  }

  /**
   * A staged copy into `bytes` was enqueued; `stagedCopyLanded(bytes)` must follow once its JS-thread write ran.
   * Until then the buffer is not registered: a direct copy enqueued later on the same stream would land first and
   * be overwritten by the staged bytes.
   */
  stagedCopyEnqueued(bytes: Uint8Array): void {
    if (this.policy === null || bytes.buffer.byteLength < this.policy.minBytes) return;
    this.stagedInFlight.set(bytes.buffer, (this.stagedInFlight.get(bytes.buffer) ?? 0) + 1);
  }

  /** The JS-thread write of a staged copy into `bytes` ran (or the copy was never enqueued). */
  stagedCopyLanded(bytes: Uint8Array): void {
    const pending = this.stagedInFlight.get(bytes.buffer);
    if (pending === undefined) return;
    if (pending <= 1) this.stagedInFlight.delete(bytes.buffer);
    else this.stagedInFlight.set(bytes.buffer, pending - 1);
  }

  /**
   * Ends the registration of `bytes`'s buffer through `unregister` (which orders it after the work enqueued so
   * far); false when the buffer is not registered. A later copy counts towards a new registration from zero.
   */
  release(bytes: Uint8Array, unregister: (address: bigint) => void): boolean {
    const registration = this.byBuffer.get(bytes.buffer);
    if (registration === undefined) return false;
    this.byBuffer.delete(bytes.buffer);
    this.collected.unregister(registration);
    this.forget(registration);
    unregister(registration.address);
    return true;
  }

  stats(): HostArrayRegistrationStats {
    return { arrays: this.live.size, bytes: this.liveBytes, registerNs: this.registerNs, refused: this.refused };
  }

  /** Ends every registration through `unregister` (the backend's release after all enqueued work). */
  dispose(unregister: (address: bigint) => void): void {
    for (const r of this.live) {
      this.collected.unregister(r);
      unregister(r.address);
    }
    this.live.clear();
    this.liveBytes = 0;
  }

  /** Drops `r` from the live set; false when it was gone already. */
  private forget(r: Registration): boolean {
    if (!this.live.delete(r)) return false;
    this.liveBytes -= r.byteLength;
    return true;
  }
}

/** A resizable ArrayBuffer or growable SharedArrayBuffer may move or grow: never registered. */
function isResizable(buffer: ArrayBufferLike): boolean {
  const b = buffer as { readonly resizable?: boolean; readonly growable?: boolean };
  return b.resizable === true || b.growable === true;
}
