import type { MemoryRange, Stream } from '../backend.js';
import type { StreamMemoryOperations } from '../backend-capabilities.js';
import { OK_VOID, type Result } from '../errors.js';
import { streamMemoryOpProblem } from '../stream-memory-op-checks.js';
import type { HostStream } from './host-stream.js';
import type { HostStreamWork } from './host-stream-work.js';

/**
 * The host backend's emulation of `StreamMemoryOperations`: a write-value op and a wait-value op on the
 * emulated stream queue, one reused op record per call (no allocation). A wait-value op holds back the
 * rest of its stream until the little-endian u64 at its target is >= the value; the target may be written
 * by another stream of this backend, by host code or by another process (a shared-memory mapping adopted
 * as pinnedHost memory), so in auto mode the scheduler re-checks blocked value waits on a timer while any
 * exist; in manual mode they are re-checked only by `step()`/`runUntilIdle()`.
 *
 * The ordering checker sees a write-value op as a write of its 8 bytes and a wait-value op as no access;
 * a value wait does not order later work for the checker (events do), so work on one backend's streams that
 * relies on a value wait alone may be reported. Across backends (processes) the checker sees neither side.
 */
export class HostStreamMemoryOps implements StreamMemoryOperations {
  constructor(
    private readonly owner: object,
    private readonly work: HostStreamWork,
  ) {}

  writeValue64(stream: Stream, target: MemoryRange, value: bigint): Result<void> {
    const problem = streamMemoryOpProblem(this.owner, 'writeValue64', stream, target, value);
    if (problem !== null) return problem;
    this.work.writeValue64(stream as HostStream, target, value);
    return OK_VOID;
  }

  waitValue64(stream: Stream, target: MemoryRange, value: bigint): Result<void> {
    const problem = streamMemoryOpProblem(this.owner, 'waitValue64', stream, target, value);
    if (problem !== null) return problem;
    this.work.waitValue64(stream as HostStream, target, value);
    return OK_VOID;
  }
}
