import type { MemoryRange, Stream } from './backend.js';
import { ErrorCode, err, type Err } from './errors.js';
import { rangeProblem, streamProblem } from './handle-checks.js';
import { MemoryKind } from './memory-kind.js';

const U64_MAX = (1n << 64n) - 1n;

/** Whether each memory's address is 8-byte aligned (an address never changes; bigint `%` would allocate per call). */
const aligned8 = new WeakMap<object, boolean>();

function addressAligned8(memory: MemoryRange['memory']): boolean {
  let known = aligned8.get(memory);
  if (known === undefined) {
    known = memory.address % 8n === 0n;
    aligned8.set(memory, known);
  }
  return known;
}

/**
 * Shared argument checks of `StreamMemoryOperations.writeValue64`/`waitValue64`: a stream and an 8-byte,
 * 8-byte-aligned range of `owner`'s cudaDevice or pinnedHost memory, and a value in 0..2^64-1. Null when
 * the call may go ahead.
 */
export function streamMemoryOpProblem(owner: object, method: string, stream: Stream, target: MemoryRange, value: bigint): Err | null {
  const problem = streamProblem(owner, stream, method) ?? rangeProblem(owner, target, method, 'target', -1);
  if (problem !== null) return problem;
  const kind = target.memory.kind;
  if (kind !== MemoryKind.CudaDevice && kind !== MemoryKind.PinnedHost) {
    return err(ErrorCode.InvalidArgument, `${method}: target range "${target.label}" is ${kind} memory; stream memory operations need cudaDevice or pinnedHost memory`);
  }
  if (target.byteLength !== 8 || target.byteOffset % 8 !== 0 || !addressAligned8(target.memory)) {
    return err(ErrorCode.InvalidArgument, `${method}: target range "${target.label}" must be 8 bytes at an 8-byte aligned offset, got byteOffset ${target.byteOffset}, byteLength ${target.byteLength}`);
  }
  if (typeof value !== 'bigint' || value < 0n || value > U64_MAX) {
    return err(ErrorCode.InvalidArgument, `${method}: value must be a bigint in 0..2^64-1, got ${String(value)}`);
  }
  return null;
}
