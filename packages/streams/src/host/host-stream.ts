import type { Event, Stream } from '../backend.js';
import type { Device } from '../device.js';
import type { HsError } from '../errors.js';
import type { HostOp } from './stream-op.js';

/**
 * A pending `synchronizeStream`/`synchronizeEvent`: resolved once `stream.completed >= position`, or
 * rejected with the stream's fault (DeviceError) or the backend's disposal (InvalidState).
 */
export interface SyncWaiter {
  readonly position: number;
  readonly resolve: () => void;
  readonly reject: (error: HsError) => void;
  /** Clock the host joins on completion (ordering checker only). */
  readonly clock: number[] | null;
}

/**
 * A host-backend stream: a FIFO of op records executed off the enqueueing call. Positions count ops:
 * `enqueued` ops were submitted and the first `completed` of them finished, so a captured position `p`
 * is complete when `completed >= p` (an O(1) test).
 */
export class HostStream implements Stream {
  destroyed = false;
  head: HostOp | null = null;
  tail: HostOp | null = null;
  /** Ops submitted so far. */
  enqueued = 0;
  /** Ops finished so far (a prefix of the submitted ones). */
  completed = 0;
  /** True while the stream sits in the scheduler's active list. */
  active = false;
  /** Pending host waits in increasing `position` order; `waiterHead` is the first unresolved one. */
  readonly waiters: SyncWaiter[] = [];
  waiterHead = 0;
  /** Position of the first op that threw (`-1`: none) and its error; reported by synchronization. */
  faultPosition = -1;
  fault: HsError | null = null;

  constructor(
    readonly owner: object,
    readonly id: number,
    readonly device: Device,
    readonly label: string,
    readonly priority: number,
    /** Index of this stream in the ordering checker's clocks (`-1` without a checker). */
    readonly clockIndex: number,
  ) {}

  /** Fault that happened before `position`, if any. */
  faultBefore(position: number): HsError | null {
    return this.faultPosition >= 0 && this.faultPosition < position ? this.fault : null;
  }
}

/**
 * A host-backend event: the captured `(stream, position)` of its last record. Never recorded means
 * complete.
 */
export class HostEvent implements Event {
  destroyed = false;
  stream: HostStream | null = null;
  position = 0;
  /** Vector clock of the stream at the last record (ordering checker only). */
  clock: number[] | null = null;

  constructor(
    readonly owner: object,
    readonly id: number,
    readonly device: Device,
    readonly label: string,
  ) {}

  /** True when the last capture completed or the event was never recorded. */
  get complete(): boolean {
    const s = this.stream;
    return s === null || s.completed >= this.position;
  }
}
