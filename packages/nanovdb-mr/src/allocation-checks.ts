import { ErrorCode, err, type Err } from '@hs/streams';
import type { DeviceMemory } from '@hs/streams';
import type { MemoryBlock } from './resource.js';

/** Largest alignment a resource accepts, in bytes (1 GiB, the backend's limit). */
const MAX_ALIGNMENT = 2 ** 30;

/**
 * Null when `bytes` is a non-negative safe integer and `alignment` a power of two from 1 to 2^30;
 * otherwise the InvalidArgument to return, naming `who` and what to pass instead.
 */
export function requestProblem(who: string, bytes: number, alignment: number): Err | null {
  if (!Number.isSafeInteger(bytes) || bytes < 0) {
    return err(ErrorCode.InvalidArgument, `${who}: bytes must be a non-negative safe integer, got ${String(bytes)}`);
  }
  if (!Number.isSafeInteger(alignment) || alignment < 1 || alignment > MAX_ALIGNMENT || (alignment & (alignment - 1)) !== 0) {
    return err(ErrorCode.InvalidArgument, `${who}: alignment must be a power of two from 1 to ${MAX_ALIGNMENT} bytes, got ${String(alignment)}`);
  }
  return null;
}

/** Alignment each live backend allocation was requested with, in bytes (weak: freed memory drops out). */
const requestedAlignment = new WeakMap<DeviceMemory, number>();

/** Remembers the alignment `memory` was allocated with, so `returnProblem` can check the one it is returned with. */
export function recordAlignment(memory: DeviceMemory, alignment: number): void {
  requestedAlignment.set(memory, alignment);
}

/**
 * Null when `block` fits a deallocation of `bytes` and `alignment` (a block of exactly that length whose
 * allocation was requested with that alignment, or `null` with 0 bytes); otherwise the InvalidArgument
 * to return.
 */
export function returnProblem(who: string, block: MemoryBlock | null, bytes: number, alignment: number): Err | null {
  if (block === null) {
    return bytes === 0 ? null : err(ErrorCode.InvalidArgument, `${who}: a null block is returned with 0 bytes, got ${String(bytes)}`);
  }
  if (typeof block !== 'object' || typeof block.byteLength !== 'number') {
    return err(ErrorCode.InvalidArgument, `${who}: expected a MemoryBlock from allocate, got ${typeof block}`);
  }
  if (block.byteLength !== bytes) {
    return err(
      ErrorCode.InvalidArgument,
      `${who}: block "${block.label}" is ${block.byteLength} bytes but ${String(bytes)} were passed; return a block with the size it was allocated with`,
    );
  }
  const allocatedWith = requestedAlignment.get(block.memory);
  if (allocatedWith !== undefined && allocatedWith !== alignment) {
    return err(
      ErrorCode.InvalidArgument,
      `${who}: block "${block.label}" was allocated with alignment ${allocatedWith} but ${String(alignment)} was passed; return a block with the alignment it was allocated with`,
    );
  }
  return null;
}
