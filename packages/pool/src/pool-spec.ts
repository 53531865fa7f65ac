import {
  Device,
  ErrorCode,
  HsError,
  MEMORY_KINDS,
  err,
  isDeviceAccessible,
  isHostAccessible,
  ok,
  requiresCudaDevice,
  type MemoryKind,
  type Result,
  type Stream,
} from '@hs/streams';
import { isResource, type SyncResource } from '@hs/nanovdb-mr';
import { DType } from '@hs/tensor';

/**
 * What a tensor pool is sized for; every number is fixed before the graph runs.
 * Spec: "Pool mechanics: bounded by construction" (holoscan-5.0-tensors-in-depth).
 */
export interface TensorPoolSpec {
  /** Diagnostics label, for example `grayscale.gray`; slots are named `<name>[slot i]`. */
  readonly name: string;
  /** Where the slots live. */
  readonly memoryKind: MemoryKind;
  /** Device of the backing allocation: a CUDA device for cudaDevice/cudaManaged, `Device.cpu()` otherwise. */
  readonly device: Device;
  /** Number of slots, a positive safe integer. */
  readonly slotCount: number;
  /** Largest tensor one slot holds, in bytes; 0 makes the pool reject every allocation. */
  readonly slotByteSpan: number;
  /** Largest rank a request may have; 0 makes the pool reject every allocation. */
  readonly maxRank: number;
  /**
   * The exact rank every request must have (a graph output's declared representation rank; `maxRank`
   * still bounds it); when omitted any rank up to `maxRank` is accepted. Spec: "Derive slot bytes from
   * deployment parameters" (the representation rank is exact).
   */
  readonly rank?: number;
  /** The only dtype requests may use; any dtype when omitted. */
  readonly dtype?: DType;
  /** Cap on distinct release streams per slot, a positive safe integer; default 8. */
  readonly maxReleaseStreams?: number;
  /** Slot alignment in bytes, a power of two; default 256. */
  readonly alignment?: number;
  /** The only stream writes may be issued on; `null` for a host writer (host-accessible kinds only). */
  readonly producerStream: Stream | null;
  /**
   * CUDA device the pool's readiness and release events are created on; every producer and release
   * stream must belong to it. Default: the producer stream's device, else `device` when it is a CUDA
   * device. Set it for a host-written pinnedHost pool read by CUDA streams. A pool left without one
   * (host memory, host writer) creates no events and accepts no release streams: host readers only.
   */
  readonly eventDevice?: Device;
  /**
   * Further CUDA devices whose streams may release the pool's tensors: readers on another GPU than the pool's
   * events, such as a `DeviceCopy` behind a `{ crossDevice: true }` input. The pool creates `maxReleaseStreams`
   * release events per slot on each of them (an event is recorded on a stream of its own device; the pool's
   * recycling poll queries events of any device), so such a reader releases in stream order like any other.
   * Distinct CUDA devices other than the event device; the pool needs an event device. Default: none.
   */
  readonly releaseDevices?: readonly Device[];
  /**
   * Where the backing allocation comes from: any resource (a class of `@hs/nanovdb-mr`, an adaptor chain
   * or a plain JS object) whose blocks are `memoryKind` memory on `device`. For cudaDevice memory an async
   * resource is used in stream order: `allocateAsync` on the producer stream, `deallocateAsync` there at
   * `dispose()`. Otherwise the pool allocates once with `allocate` and returns with `deallocate` (graph
   * pools of `@hs/runtime` require the async tier for cudaDevice memory). Default: the
   * current device resource (`currentDeviceResource`) for cudaDevice memory, else
   * `defaultResource(backend, memoryKind, device)`.
   */
  readonly resource?: SyncResource;
}

/** A validated spec with defaults applied and the slot geometry computed. */
export interface ResolvedPoolSpec {
  readonly name: string;
  readonly memoryKind: MemoryKind;
  readonly device: Device;
  readonly slotCount: number;
  readonly slotByteSpan: number;
  readonly maxRank: number;
  /** Exact rank of every request, or `null` for any rank up to `maxRank`. */
  readonly rank: number | null;
  readonly dtype: DType | null;
  readonly maxReleaseStreams: number;
  readonly alignment: number;
  readonly producerStream: Stream | null;
  /** CUDA device of the pool's events; `null` for a host-only pool that has none. */
  readonly eventDevice: Device | null;
  /** Devices whose streams may release besides the event device (`TensorPoolSpec.releaseDevices`), in the spec's order. */
  readonly releaseDevices: readonly Device[];
  /** The injected resource, or `null` for the default one of the memory kind. */
  readonly resource: SyncResource | null;
  /** Bytes from one slot's start to the next: `slotByteSpan` rounded up to `alignment` (at least one alignment unit). */
  readonly slotStride: number;
  /** Bytes of the one backing allocation: `slotStride * slotCount`. */
  readonly totalBytes: number;
}

const DEFAULT_MAX_RELEASE_STREAMS = 8;

/**
 * Most events one pool may preallocate (`slotCount * (maxReleaseStreams + 1)`). Far above any real plan;
 * it turns an absurd geometry into an up-front error instead of minutes of event creation.
 */
const MAX_POOL_EVENTS = 1 << 20;
const DEFAULT_ALIGNMENT = 256;

/**
 * Checks a pool spec and resolves defaults and geometry. Returns `InvalidArgument` for out-of-domain
 * numbers, a device that does not suit the memory kind, a host writer on cudaDevice memory, a device
 * producer on pageable host memory or a producer stream off the event device; `ArithmeticOverflow`
 * when the backing size is not a safe integer.
 * @throws HsError `InvalidArgument` for wrong argument types (not a Device, DType, MemoryKind, string or resource).
 */
export function resolvePoolSpec(spec: TensorPoolSpec): Result<ResolvedPoolSpec> {
  if (typeof spec !== 'object' || spec === null) throw new HsError(ErrorCode.InvalidArgument, 'pool spec must be an object');
  const { name, memoryKind, device, slotCount, slotByteSpan, maxRank } = spec;
  if (typeof name !== 'string') throw new HsError(ErrorCode.InvalidArgument, 'pool spec name must be a string');
  if (!MEMORY_KINDS.includes(memoryKind)) throw new HsError(ErrorCode.InvalidArgument, `pool "${name}": memoryKind must be a MemoryKind`);
  if (!(device instanceof Device)) throw new HsError(ErrorCode.InvalidArgument, `pool "${name}": device must be a Device`);
  if (spec.dtype !== undefined && !(spec.dtype instanceof DType)) throw new HsError(ErrorCode.InvalidArgument, `pool "${name}": dtype must be a DType`);
  if (spec.eventDevice !== undefined && !(spec.eventDevice instanceof Device)) {
    throw new HsError(ErrorCode.InvalidArgument, `pool "${name}": eventDevice must be a Device`);
  }
  const releaseDevices = spec.releaseDevices ?? [];
  if (!Array.isArray(releaseDevices) || !releaseDevices.every((d: unknown) => d instanceof Device)) {
    throw new HsError(ErrorCode.InvalidArgument, `pool "${name}": releaseDevices must be an array of Devices`);
  }
  if (spec.resource !== undefined && !isResource(spec.resource)) {
    throw new HsError(ErrorCode.InvalidArgument, `pool "${name}": resource must be a resource (an object with allocate and deallocate)`);
  }
  const maxReleaseStreams = spec.maxReleaseStreams ?? DEFAULT_MAX_RELEASE_STREAMS;
  const alignment = spec.alignment ?? DEFAULT_ALIGNMENT;
  const producerStream = spec.producerStream ?? null;

  const bad = (what: string): Result<never> => err(ErrorCode.InvalidArgument, `pool "${name}": ${what}`);
  if (!isCount(slotCount, 1)) return bad(`slotCount is ${String(slotCount)}; it must be a positive safe integer`);
  if (!isCount(slotByteSpan, 0)) return bad(`slotByteSpan is ${String(slotByteSpan)}; it must be a non-negative safe integer (bytes)`);
  if (!isCount(maxRank, 0)) return bad(`maxRank is ${String(maxRank)}; it must be a non-negative safe integer`);
  const rank = spec.rank ?? null;
  if (rank !== null && !isCount(rank, 0)) return bad(`rank is ${String(rank)}; it must be a non-negative safe integer`);
  if (!isCount(maxReleaseStreams, 1)) return bad(`maxReleaseStreams is ${String(maxReleaseStreams)}; it must be a positive safe integer`);
  if (!isCount(alignment, 1) || (alignment & (alignment - 1)) !== 0 || alignment > 2 ** 30) {
    return bad(`alignment is ${String(alignment)}; it must be a power of two up to 2^30 (bytes)`);
  }
  if (requiresCudaDevice(memoryKind) !== device.isCuda) {
    return bad(`${memoryKind} memory needs ${device.isCuda ? 'Device.cpu()' : 'a CUDA device such as Device.cuda(0)'}, got ${device.toString()}`);
  }
  if (producerStream === null && !isHostAccessible(memoryKind)) {
    return bad(`a host writer (producerStream null) cannot write ${memoryKind} memory; give the pool a producer stream`);
  }
  if (producerStream !== null && !isDeviceAccessible(memoryKind)) {
    return bad(`a device producer stream cannot write pageable ${memoryKind} memory; use pinnedHost or a host writer`);
  }
  if (spec.eventDevice !== undefined && !spec.eventDevice.isCuda) {
    return bad(`eventDevice must be a CUDA device (events order CUDA streams), got ${spec.eventDevice.toString()}; omit it for a host-only pool`);
  }
  const eventDevice = spec.eventDevice ?? producerStream?.device ?? (device.isCuda ? device : null);
  if (device.isCuda && eventDevice !== device) {
    return bad(`events of ${memoryKind} memory on ${device.toString()} must be on that device, not ${String(eventDevice)} (hs never orders across devices)`);
  }
  if (producerStream !== null && producerStream.device !== eventDevice) {
    return bad(`producer stream "${producerStream.label}" is on ${producerStream.device.toString()} but the pool's events are on ${String(eventDevice)}`);
  }
  for (let i = 0; i < releaseDevices.length; i++) {
    const d = releaseDevices[i] as Device;
    if (!d.isCuda) return bad(`releaseDevices[${i}] is ${d.toString()}; release devices are CUDA devices (their streams record the release events)`);
    if (eventDevice === null) return bad(`releaseDevices needs the pool to have an event device (a producer stream, CUDA memory or eventDevice)`);
    if (d === eventDevice || releaseDevices.indexOf(d) !== i) return bad(`releaseDevices[${i}] (${d.toString()}) repeats the event device or an earlier entry; list each other device once`);
  }

  const slotStride = Math.max(alignment, Math.ceil(slotByteSpan / alignment) * alignment);
  const totalBytes = slotStride * slotCount;
  if (!Number.isSafeInteger(totalBytes)) {
    return err(ErrorCode.ArithmeticOverflow, `pool "${name}": ${slotCount} slots of ${slotStride} bytes exceed 2^53 bytes`);
  }
  const events = slotCount * (maxReleaseStreams * (1 + releaseDevices.length) + 1);
  if (events > MAX_POOL_EVENTS) {
    return err(
      ErrorCode.ResourceExhausted,
      `pool "${name}": ${slotCount} slots x (${maxReleaseStreams} release streams + 1 readiness) (on ${1 + releaseDevices.length} devices) need ${events} events, more than the ${MAX_POOL_EVENTS} one pool may preallocate; lower the queue depth or the release-stream cap`,
    );
  }
  return ok(
    Object.freeze({
      name,
      memoryKind,
      device,
      slotCount,
      slotByteSpan,
      maxRank,
      rank,
      dtype: spec.dtype ?? null,
      maxReleaseStreams,
      alignment,
      producerStream,
      eventDevice,
      releaseDevices: Object.freeze(releaseDevices.slice()),
      resource: spec.resource ?? null,
      slotStride,
      totalBytes,
    }),
  );
}

function isCount(value: number, min: number): boolean {
  return Number.isSafeInteger(value) && value >= min;
}
