import type { DeviceMemory, Event, MemoryRange, Stream } from './backend.js';
import type { Device } from './device.js';
import { ErrorCode, HsError, err, type Err } from './errors.js';
import { MemoryKind } from './memory-kind.js';

/**
 * Validation of handles and ranges passed to a backend (host or CUDA). Every handle a backend creates
 * carries its `owner` (the backend instance), which is how foreign handles are told apart. Each check
 * returns `null` when the argument is usable and the `Err` to return otherwise (so the hot path
 * allocates nothing on success); wrong argument types are programmer errors and throw.
 */

/** A stream, event or allocation as a backend creates it: public fields plus its owner. */
interface OwnedMemory extends DeviceMemory {
  readonly owner: object;
}

function ownedBy(handle: unknown, owner: object): boolean {
  return typeof handle === 'object' && handle !== null && (handle as { owner?: unknown }).owner === owner;
}

function labelOf(handle: unknown): string {
  const label = (handle as { label?: unknown }).label;
  return typeof label === 'string' ? label : '(unlabelled)';
}

function requireObject(value: unknown, method: string, what: string): void {
  if (typeof value !== 'object' || value === null) {
    throw new HsError(ErrorCode.InvalidArgument, `${method}: expected ${what}, got ${value === null ? 'null' : typeof value}`);
  }
}

/**
 * Null when `stream` is a live stream of `owner`; InvalidArgument for a foreign stream, InvalidState for a
 * destroyed one. @throws HsError InvalidArgument when `stream` is not an object.
 */
export function streamProblem(owner: object, stream: Stream, method: string): Err | null {
  if (!ownedBy(stream, owner)) {
    requireObject(stream, method, 'a Stream');
    return err(
      ErrorCode.InvalidArgument,
      `${method}: stream "${labelOf(stream)}" was not created by this backend; use streams from the same backend instance`,
    );
  }
  if (stream.destroyed) {
    return err(ErrorCode.InvalidState, `${method}: stream "${stream.label}" was destroyed; create a new stream`);
  }
  return null;
}

/**
 * Null when `event` is a live event of `owner`; InvalidArgument for a foreign event, InvalidState for a
 * destroyed one. @throws HsError InvalidArgument when `event` is not an object.
 */
export function eventProblem(owner: object, event: Event, method: string): Err | null {
  if (!ownedBy(event, owner)) {
    requireObject(event, method, 'an Event');
    return err(
      ErrorCode.InvalidArgument,
      `${method}: event "${labelOf(event)}" was not created by this backend; use events from the same backend instance`,
    );
  }
  if (event.destroyed) {
    return err(ErrorCode.InvalidState, `${method}: event "${event.label}" was destroyed; create a new event`);
  }
  return null;
}

/**
 * Null when `memory` is a live allocation of `owner`; InvalidArgument for foreign memory, InvalidState for
 * freed memory. @throws HsError InvalidArgument when `memory` is not an object.
 */
export function memoryProblem(owner: object, memory: unknown, method: string, role: string): Err | null {
  if (!ownedBy(memory, owner)) {
    requireObject(memory, method, role === 'the' ? 'DeviceMemory' : `DeviceMemory for ${role}`);
    return err(
      ErrorCode.InvalidArgument,
      `${method}: ${role} memory "${labelOf(memory)}" was not allocated by this backend; use memory from the same backend instance`,
    );
  }
  const m = memory as OwnedMemory;
  if (m.freed) {
    return err(ErrorCode.InvalidState, `${method}: ${role} memory "${m.label}" was already freed`);
  }
  return null;
}

/**
 * Null when `range` lies inside a live allocation of `owner`. InvalidArgument for foreign memory,
 * negative or fractional offsets/lengths and ranges past the end; InvalidState for freed memory.
 * `role` names the argument in messages (`dst`, `kernel.reads`); `index` is its position in an array or -1.
 * @throws HsError InvalidArgument when `range` is not an object.
 */
export function rangeProblem(owner: object, range: MemoryRange, method: string, role: string, index: number): Err | null {
  if (typeof range !== 'object' || range === null) {
    requireObject(range, method, `a MemoryRange for ${index < 0 ? role : `${role}[${index}]`}`);
  }
  const memory = range.memory;
  const offset = range.byteOffset;
  const length = range.byteLength;
  if (
    ownedBy(memory, owner) &&
    !memory.freed &&
    Number.isSafeInteger(offset) &&
    Number.isSafeInteger(length) &&
    offset >= 0 &&
    length >= 0 &&
    offset + length <= memory.byteSize
  ) {
    return null;
  }
  const name = index < 0 ? role : `${role}[${index}]`;
  const problem = memoryProblem(owner, memory, method, name);
  if (problem !== null) return problem;
  const m = memory as OwnedMemory;
  return err(
    ErrorCode.InvalidArgument,
    `${method}: ${name} range "${range.label}" (byteOffset ${offset}, byteLength ${length}) does not lie inside ` +
      `memory "${m.label}" of ${m.byteSize} bytes; offsets and lengths must be non-negative integers within the allocation`,
  );
}

/**
 * Null when device work on `stream` may touch the (valid) range: NotSupported for pageable host memory
 * and for device memory of another device.
 */
export function deviceAccessProblem(
  stream: { readonly device: Device; readonly label: string },
  range: MemoryRange,
  method: string,
  role: string,
  index: number,
): Err | null {
  const memory = range.memory;
  if (memory.kind === MemoryKind.Host) {
    return err(
      ErrorCode.NotSupported,
      `${method}: ${index < 0 ? role : `${role}[${index}]`} range "${range.label}" is pageable host memory, which device work cannot ` +
        `access; allocate pinnedHost or cudaManaged memory, or copy it with memcpyAsync/copyFromHostAsync first`,
    );
  }
  if (memory.kind === MemoryKind.CudaDevice && memory.device !== stream.device) {
    return err(
      ErrorCode.NotSupported,
      `${method}: ${index < 0 ? role : `${role}[${index}]`} range "${range.label}" lives on ${memory.device.toString()} but stream ` +
        `"${stream.label}" submits to ${stream.device.toString()}; copy it with memcpyAsync first`,
    );
  }
  return null;
}
