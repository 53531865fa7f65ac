import type { AllocationRequest, Event, KernelLaunch, MemoryRange, Stream, StreamOptions } from './backend.js';
import { describeDevice, deviceProblem } from './allocation-request.js';
import type { Device } from './device.js';
import { ErrorCode, HsError, err, type Err } from './errors.js';
import { deviceAccessProblem, eventProblem, memoryProblem, rangeProblem, streamProblem } from './handle-checks.js';
import { MemoryKind } from './memory-kind.js';

/**
 * The argument checks at the top of the Backend methods, in the order both backends (host and CUDA) run
 * them, so each sequence and its messages are held once. `owner` is the backend instance the handles
 * must come from (see handle-checks.ts). Each check returns `null` when the call may go ahead and the
 * `Err` to return otherwise, and allocates nothing on success (no closures, no objects); wrong argument
 * types are programmer errors and throw `HsError` InvalidArgument.
 */

/** InvalidState once the backend was disposed; null before. */
export function disposedProblem(disposed: boolean, method: string): Err | null {
  return disposed ? err(ErrorCode.InvalidState, `${method}: the backend was disposed`) : null;
}

/**
 * `createStream`: InvalidState once disposed; InvalidArgument for a device the backend does not have or
 * a priority (`options.priority`, default 0) that is not an integer.
 */
export function createStreamProblem(disposed: boolean, devices: readonly Device[], device: Device, options: StreamOptions): Err | null {
  const problem = disposedProblem(disposed, 'createStream') ?? deviceProblem(devices, device, 'createStream');
  if (problem !== null) return problem;
  const priority = options.priority ?? 0;
  if (!Number.isInteger(priority)) {
    return err(ErrorCode.InvalidArgument, `createStream: priority must be an integer, got ${String(priority)}`);
  }
  return null;
}

/** `createEvent`: InvalidState once disposed; InvalidArgument for a device the backend does not have. */
export function createEventProblem(disposed: boolean, devices: readonly Device[], device: Device): Err | null {
  return disposedProblem(disposed, 'createEvent') ?? deviceProblem(devices, device, 'createEvent');
}

/**
 * `recordEvent`: the event, then the stream (foreign: InvalidArgument, destroyed: InvalidState), then
 * InvalidArgument when they belong to different devices.
 * @throws HsError InvalidArgument when either is not an object.
 */
export function recordEventProblem(owner: object, event: Event, stream: Stream): Err | null {
  const problem = eventProblem(owner, event, 'recordEvent') ?? streamProblem(owner, stream, 'recordEvent');
  if (problem !== null) return problem;
  if (event.device !== stream.device) {
    return err(
      ErrorCode.InvalidArgument,
      `recordEvent: event "${event.label}" belongs to ${event.device.toString()} but stream "${stream.label}" to ${stream.device.toString()}; record events on a stream of their own device`,
    );
  }
  return null;
}

/**
 * `queryEvents`: `count` must be an integer in `0..events.length` and `completed` must hold an entry per
 * queried event. Returns the number of events to query.
 * @throws HsError InvalidArgument when `count` is out of range or `completed` is shorter than `count`.
 */
export function assertCompletedFitsEvents(events: readonly Event[], completed: Uint8Array, count: number = events.length): number {
  if (!Number.isInteger(count) || count < 0 || count > events.length) {
    throw new HsError(ErrorCode.InvalidArgument, `queryEvents: count is ${String(count)}; it must be an integer from 0 to events.length (${events.length})`);
  }
  if (completed.length < count) {
    throw new HsError(
      ErrorCode.InvalidArgument,
      `queryEvents: completed has ${completed.length} entries but ${count} events were given; pass a Uint8Array at least as long as events`,
    );
  }
  return count;
}

/**
 * `streamWaitEvent`: the stream, then the event (foreign: InvalidArgument, destroyed: InvalidState).
 * @throws HsError InvalidArgument when either is not an object.
 */
export function streamWaitEventProblem(owner: object, stream: Stream, event: Event): Err | null {
  return streamProblem(owner, stream, 'streamWaitEvent') ?? eventProblem(owner, event, 'streamWaitEvent');
}

/**
 * `allocateAsync` on a valid `stream`: InvalidArgument unless the request asks for cudaDevice memory on
 * the stream's device (stream-ordered allocation gives nothing else). `request` must be an object.
 */
export function asyncAllocationKindProblem(request: AllocationRequest, stream: Stream): Err | null {
  if (request.kind !== MemoryKind.CudaDevice || request.device !== stream.device) {
    return err(
      ErrorCode.InvalidArgument,
      `allocateAsync: stream-ordered allocation gives cudaDevice memory on the stream's device (${stream.device.toString()}); got ${String(request.kind)} on ${describeDevice(request.device)}`,
    );
  }
  return null;
}

/** `allocateAsync` on a device without stream-ordered memory pools: NotSupported, pointing at `allocate`. */
export function noMemoryPoolsError(device: Device): Err {
  return err(ErrorCode.NotSupported, `allocateAsync: ${device.toString()} has no stream-ordered memory-pool support; use synchronous allocate (cudaMalloc)`);
}

/**
 * `hostView`: the memory (foreign: InvalidArgument, freed: InvalidState), then NotSupported for cudaDevice
 * memory, which the host cannot address.
 * @throws HsError InvalidArgument when `memory` is not an object.
 */
export function hostViewProblem(owner: object, memory: { readonly kind: MemoryKind; readonly label: string }): Err | null {
  const problem = memoryProblem(owner, memory, 'hostView', 'the');
  if (problem !== null) return problem;
  if (memory.kind === MemoryKind.CudaDevice) {
    return err(
      ErrorCode.NotSupported,
      `hostView: memory "${memory.label}" is cudaDevice memory, which the host cannot address; copy it with copyToHostAsync or allocate pinnedHost/cudaManaged memory`,
    );
  }
  return null;
}

/**
 * `memcpyAsync`: the stream, `dst`, `src` (each range inside a live allocation of `owner`), then
 * InvalidArgument when their lengths differ.
 * @throws HsError InvalidArgument when an argument is not an object.
 */
export function memcpyProblem(owner: object, stream: Stream, dst: MemoryRange, src: MemoryRange): Err | null {
  const problem =
    streamProblem(owner, stream, 'memcpyAsync') ?? rangeProblem(owner, dst, 'memcpyAsync', 'dst', -1) ?? rangeProblem(owner, src, 'memcpyAsync', 'src', -1);
  if (problem !== null) return problem;
  if (dst.byteLength !== src.byteLength) {
    return err(ErrorCode.InvalidArgument, `memcpyAsync: dst "${dst.label}" is ${dst.byteLength} bytes but src "${src.label}" is ${src.byteLength}; lengths must match`);
  }
  return null;
}

/**
 * `memsetAsync`: the stream and `dst`, then NotSupported when device work cannot reach `dst` (pageable
 * host memory, another device's memory), then InvalidArgument unless `value` is an integer 0..255.
 * @throws HsError InvalidArgument when an argument is not an object.
 */
export function memsetProblem(owner: object, stream: Stream, dst: MemoryRange, value: number): Err | null {
  const problem =
    streamProblem(owner, stream, 'memsetAsync') ?? rangeProblem(owner, dst, 'memsetAsync', 'dst', -1) ?? deviceAccessProblem(stream, dst, 'memsetAsync', 'dst', -1);
  if (problem !== null) return problem;
  if (!Number.isInteger(value) || value < 0 || value > 255) {
    return err(ErrorCode.InvalidArgument, `memsetAsync: value must be a byte (integer 0..255), got ${String(value)}`);
  }
  return null;
}

/**
 * `copyFromHostAsync`: the stream and `dst`, then InvalidArgument when the lengths differ.
 * @throws HsError InvalidArgument when `src` is not a Uint8Array (checked first) or an argument is not an object.
 */
export function copyFromHostProblem(owner: object, stream: Stream, dst: MemoryRange, src: Uint8Array): Err | null {
  if (!(src instanceof Uint8Array)) throw new HsError(ErrorCode.InvalidArgument, 'copyFromHostAsync: src must be a Uint8Array');
  const problem = streamProblem(owner, stream, 'copyFromHostAsync') ?? rangeProblem(owner, dst, 'copyFromHostAsync', 'dst', -1);
  if (problem !== null) return problem;
  if (dst.byteLength !== src.byteLength) {
    return err(ErrorCode.InvalidArgument, `copyFromHostAsync: dst "${dst.label}" is ${dst.byteLength} bytes but src is ${src.byteLength}; lengths must match`);
  }
  return null;
}

/**
 * `copyToHostAsync`: the stream and `src`, then InvalidArgument when the lengths differ.
 * @throws HsError InvalidArgument when `dst` is not a Uint8Array (checked first) or an argument is not an object.
 */
export function copyToHostProblem(owner: object, stream: Stream, dst: Uint8Array, src: MemoryRange): Err | null {
  if (!(dst instanceof Uint8Array)) throw new HsError(ErrorCode.InvalidArgument, 'copyToHostAsync: dst must be a Uint8Array');
  const problem = streamProblem(owner, stream, 'copyToHostAsync') ?? rangeProblem(owner, src, 'copyToHostAsync', 'src', -1);
  if (problem !== null) return problem;
  if (dst.byteLength !== src.byteLength) {
    return err(ErrorCode.InvalidArgument, `copyToHostAsync: src "${src.label}" is ${src.byteLength} bytes but dst is ${dst.byteLength}; lengths must match`);
  }
  return null;
}

/**
 * `launchHostFunc`: the stream.
 * @throws HsError InvalidArgument when `fn` is not a function (checked first) or `stream` is not an object.
 */
export function hostFuncProblem(owner: object, stream: Stream, fn: () => void): Err | null {
  if (typeof fn !== 'function') throw new HsError(ErrorCode.InvalidArgument, 'launchHostFunc: fn must be a function');
  return streamProblem(owner, stream, 'launchHostFunc');
}

/**
 * `launchKernel` on a valid `stream` with a well-formed `kernel` (`assertKernelShape`): every range of
 * `kernel.reads`, then of `kernel.writes`, must lie inside a live allocation of `owner` (InvalidArgument /
 * InvalidState, naming `reads[i]` or `writes[i]`) that device work on `stream` can reach (NotSupported).
 * @throws HsError InvalidArgument when a range is not an object.
 */
export function kernelRangesProblem(owner: object, stream: Stream, kernel: KernelLaunch): Err | null {
  const { reads, writes } = kernel;
  for (let i = 0; i < reads.length; i++) {
    const r = reads[i] as MemoryRange;
    const p = rangeProblem(owner, r, 'launchKernel', 'reads', i) ?? deviceAccessProblem(stream, r, 'launchKernel', 'reads', i);
    if (p !== null) return p;
  }
  for (let i = 0; i < writes.length; i++) {
    const w = writes[i] as MemoryRange;
    const p = rangeProblem(owner, w, 'launchKernel', 'writes', i) ?? deviceAccessProblem(stream, w, 'launchKernel', 'writes', i);
    if (p !== null) return p;
  }
  return null;
}

/**
 * `noteHostAccess`: the range must lie inside a live allocation of `owner` that the host can address, and
 * `access` must be `read` or `write`.
 * @throws HsError InvalidArgument/InvalidState for an invalid range or access, NotSupported for cudaDevice
 * memory.
 */
export function assertHostAccessNote(owner: object, range: MemoryRange, access: 'read' | 'write'): void {
  const problem = rangeProblem(owner, range, 'noteHostAccess', 'range', -1);
  if (problem !== null) throw problem.error;
  if (range.memory.kind === MemoryKind.CudaDevice) {
    throw new HsError(ErrorCode.NotSupported, `noteHostAccess: range "${range.label}" is cudaDevice memory, which the host cannot access`);
  }
  if (access !== 'read' && access !== 'write') {
    throw new HsError(ErrorCode.InvalidArgument, `noteHostAccess: access must be 'read' or 'write', got ${String(access)}`);
  }
}

/**
 * `PeerCopyOperations.copyAsync`: the stream and ranges, then InvalidArgument unless `dst` and `src` are
 * cudaDevice memory of equal length with `dst` on the stream's device, and, when `peers` says the
 * destination cannot reach the source directly, a pinnedHost `staging` range at least that long.
 */
export function peerCopyProblem(
  owner: object,
  stream: Stream,
  dst: MemoryRange,
  src: MemoryRange,
  staging: MemoryRange | undefined,
  peers: { canAccessPeer(device: Device, peer: Device): boolean },
): Err | null {
  const method = 'peerCopy.copyAsync';
  const problem = streamProblem(owner, stream, method) ?? rangeProblem(owner, dst, method, 'dst', -1) ?? rangeProblem(owner, src, method, 'src', -1);
  if (problem !== null) return problem;
  for (const [role, range] of [['dst', dst], ['src', src]] as const) {
    if (range.memory.kind !== MemoryKind.CudaDevice) {
      return err(ErrorCode.InvalidArgument, `${method}: ${role} range "${range.label}" is ${range.memory.kind} memory; peer copies move cudaDevice memory (use memcpyAsync for other kinds)`);
    }
  }
  if (dst.memory.device !== stream.device) {
    return err(
      ErrorCode.InvalidArgument,
      `${method}: dst range "${dst.label}" lives on ${dst.memory.device.toString()} but stream "${stream.label}" submits to ${stream.device.toString()}; enqueue the copy on a stream of the destination's device`,
    );
  }
  if (dst.byteLength !== src.byteLength) {
    return err(ErrorCode.InvalidArgument, `${method}: dst "${dst.label}" is ${dst.byteLength} bytes but src "${src.label}" is ${src.byteLength}; lengths must match`);
  }
  if (peers.canAccessPeer(dst.memory.device, src.memory.device)) return null;
  if (staging === undefined) {
    return err(
      ErrorCode.InvalidArgument,
      `${method}: ${dst.memory.device.toString()} cannot access ${src.memory.device.toString()} directly, so the copy is staged through pinned host memory; ` +
        `pass a pinnedHost staging range of at least ${src.byteLength} bytes`,
    );
  }
  const bad = rangeProblem(owner, staging, method, 'staging', -1);
  if (bad !== null) return bad;
  if (staging.memory.kind !== MemoryKind.PinnedHost || staging.byteLength < src.byteLength) {
    return err(
      ErrorCode.InvalidArgument,
      `${method}: staging range "${staging.label}" is ${staging.byteLength} bytes of ${staging.memory.kind} memory; a staged copy needs pinnedHost memory of at least ${src.byteLength} bytes`,
    );
  }
  return null;
}
