import type { DeviceMemory, MemoryRange } from '../backend.js';
import { AccessHistory, type AccessRecord, type HistorySegment } from './access-history.js';
import { makeViolation, type OrderingHazard, type OrderingViolation } from './ordering-violation.js';
import { clockCovers, copyClock, joinClock, meetClock } from './vector-clock.js';

/** Options for the host backend's ordering checker. */
export interface OrderingCheckerOptions {
  /** Called synchronously with each violation as it is found; what it throws propagates to the caller. */
  readonly onViolation?: (violation: OrderingViolation) => void;
  /** Most violations kept in `violations` (later ones are counted in `droppedViolations`); default 1000. */
  readonly maxViolations?: number;
}

/**
 * The stream-contract race detector of the host backend (`new HostBackend({ orderingChecker: true })`).
 * Every stream (and the host thread) carries a vector clock: stream order advances it, an event record
 * captures it, a stream wait joins the captured clock, and a completed host wait or a successful event
 * query joins it into the host's clock. Each device access is checked when it is enqueued (so the
 * result does not depend on how the streams happened to interleave), each host access when declared
 * with `Backend.noteHostAccess`. Spec: "Two stream roles order every device tensor".
 */
export interface OrderingChecker {
  /** Violations found so far, oldest first (at most `maxViolations`). */
  readonly violations: readonly OrderingViolation[];
  /** Violations found after `violations` was full. */
  readonly droppedViolations: number;
  /** Called synchronously with each violation; may be replaced at any time. */
  onViolation: ((violation: OrderingViolation) => void) | undefined;
  /** Forgets the violations found so far (the access history is kept). */
  clear(): void;
}

/** Clock owner index of the host thread. */
const HOST_CLOCK = 0;
/** History segments (over all allocations) below which the checker never prunes. */
const MIN_PRUNE_SEGMENTS = 256;

interface PendingReport {
  hazard: OrderingHazard;
  earlier: AccessRecord;
  start: number;
  end: number;
}

/** The checker's implementation; the host backend drives it. */
export class StreamOrderingChecker implements OrderingChecker {
  onViolation: ((violation: OrderingViolation) => void) | undefined;
  droppedViolations = 0;
  private readonly found: OrderingViolation[] = [];
  private readonly maxViolations: number;
  /** Clock per owner: index 0 is the host thread, then one per stream in creation order. */
  private readonly clocks: number[][] = [[0]];
  private readonly labels: string[] = ['host'];
  private readonly live: boolean[] = [true];
  /** Host clock version each owner last joined; the host clock's version bumps whenever it changes. */
  private readonly seenHostVersion: number[] = [0];
  private hostVersion = 0;
  private readonly histories = new Map<DeviceMemory, AccessHistory>();
  /** Segments held over all allocations, and the count that triggers the next prune. */
  private segmentCount = 0;
  private pruneAt = MIN_PRUNE_SEGMENTS;
  private readonly pending: PendingReport[] = [];

  constructor(options: OrderingCheckerOptions = {}) {
    this.onViolation = options.onViolation;
    this.maxViolations = options.maxViolations ?? 1000;
  }

  get violations(): readonly OrderingViolation[] {
    return this.found;
  }

  clear(): void {
    this.found.length = 0;
    this.droppedViolations = 0;
  }

  /** Adds a stream's clock, starting ordered after everything the host is ordered after; returns its index. */
  addStream(label: string): number {
    const index = this.clocks.length;
    const clock = (this.clocks[HOST_CLOCK] as number[]).slice();
    while (clock.length <= index) clock.push(0);
    this.clocks.push(clock);
    this.labels.push(label);
    this.live.push(true);
    this.seenHostVersion.push(this.hostVersion);
    return index;
  }

  /** A destroyed stream makes no more accesses, so pruning stops waiting for its clock. */
  retireStream(index: number): void {
    this.live[index] = false;
  }

  /**
   * Starts one op on stream `index`: the stream joins the host clock (work enqueued now is ordered after
   * everything the host did before) and takes a new access number.
   */
  beginStreamOp(index: number): void {
    const clock = this.clocks[index] as number[];
    if (this.seenHostVersion[index] !== this.hostVersion) {
      joinClock(clock, this.clocks[HOST_CLOCK] as number[]);
      this.seenHostVersion[index] = this.hostVersion;
    }
    clock[index] = (clock[index] as number) + 1;
  }

  /** Checks and records an access of the op begun last on `index`. `range` must be valid. */
  access(index: number, range: MemoryRange, mode: 'read' | 'write', operation: string): void {
    if (range.byteLength === 0) return;
    const clock = this.clocks[index] as number[];
    const record: AccessRecord = { owner: index, epoch: clock[index] as number, rangeLabel: range.label, operation };
    let history = this.histories.get(range.memory);
    if (history === undefined) {
      history = new AccessHistory(range.memory.byteSize);
      this.histories.set(range.memory, history);
    }
    const start = range.byteOffset;
    const end = start + range.byteLength;
    const segmentsBefore = history.segments.length;
    const first = history.isolate(start, end);
    const segs = history.segments;
    const pending = this.pending;
    pending.length = 0;
    for (let i = first; i < segs.length && (segs[i] as HistorySegment).start < end; i++) {
      const seg = segs[i] as HistorySegment;
      const write = seg.write;
      if (write !== null && !clockCovers(clock, write.owner, write.epoch)) {
        this.note(mode === 'read' ? 'read-after-write' : 'write-after-write', write, seg);
      }
      if (mode === 'write') {
        for (const read of seg.reads) {
          if (!clockCovers(clock, read.owner, read.epoch)) this.note('write-after-read', read, seg);
        }
      } else {
        AccessHistory.recordRead(seg, record);
      }
    }
    if (mode === 'write') history.recordWrite(first, end, record);
    this.segmentCount += segs.length - segmentsBefore;
    if (pending.length > 0) {
      // A copy: onViolation may enqueue more work, which re-enters this method.
      for (const p of pending.slice()) this.report(p, record, mode, range.memory.label);
    }
    if (this.segmentCount > this.pruneAt) this.prune();
  }

  /** Checks and records a host-thread access declared through `noteHostAccess`. */
  hostAccess(range: MemoryRange, mode: 'read' | 'write'): void {
    const host = this.clocks[HOST_CLOCK] as number[];
    host[HOST_CLOCK] = (host[HOST_CLOCK] as number) + 1;
    this.hostVersion++;
    this.access(HOST_CLOCK, range, mode, mode === 'read' ? 'host read' : 'host write');
  }

  /** Copies stream `index`'s clock into `target` (or a new array) for an event record. */
  capture(index: number, target: number[] | null): number[] {
    const clock = this.clocks[index] as number[];
    if (target === null) return clock.slice();
    copyClock(target, clock);
    return target;
  }

  /** A stream wait: stream `index` becomes ordered after `clock`. */
  join(index: number, clock: readonly number[]): void {
    joinClock(this.clocks[index] as number[], clock);
  }

  /** A copy of stream `index`'s clock (for a host wait on the stream). */
  snapshot(index: number): number[] {
    return (this.clocks[index] as number[]).slice();
  }

  /** A completed host wait or successful query: the host becomes ordered after `clock`. */
  joinHost(clock: readonly number[]): void {
    if (joinClock(this.clocks[HOST_CLOCK] as number[], clock)) this.hostVersion++;
  }

  /** Drops the history of freed memory. */
  forget(memory: DeviceMemory): void {
    const history = this.histories.get(memory);
    if (history === undefined) return;
    this.segmentCount -= history.segments.length;
    this.histories.delete(memory);
  }

  /** Drops all history (backend disposed). */
  reset(): void {
    this.histories.clear();
    this.segmentCount = 0;
    this.live.fill(false, 1);
  }

  /** Number of history segments held over all allocations (for tests of bounded memory). */
  historySize(): number {
    return this.segmentCount;
  }

  private note(hazard: OrderingHazard, earlier: AccessRecord, seg: HistorySegment): void {
    for (const p of this.pending) {
      if (p.hazard === hazard && p.earlier === earlier && p.end === seg.start) {
        p.end = seg.end;
        return;
      }
    }
    this.pending.push({ hazard, earlier, start: seg.start, end: seg.end });
  }

  private report(p: PendingReport, later: AccessRecord, mode: 'read' | 'write', memoryLabel: string): void {
    const violation = makeViolation(
      p.hazard,
      {
        stream: this.labels[p.earlier.owner] as string,
        rangeLabel: p.earlier.rangeLabel,
        operation: p.earlier.operation,
        access: p.hazard === 'write-after-read' ? 'read' : 'write',
      },
      { stream: this.labels[later.owner] as string, rangeLabel: later.rangeLabel, operation: later.operation, access: mode },
      memoryLabel,
      p.start,
      p.end - p.start,
    );
    if (this.found.length < this.maxViolations) this.found.push(violation);
    else this.droppedViolations++;
    this.onViolation?.(violation);
  }

  /**
   * Forgets accesses that every live stream and the host are already ordered after. Runs when the
   * segment count doubled since the last prune, so its cost is amortized over the accesses that grew it.
   */
  private prune(): void {
    const floor = (this.clocks[HOST_CLOCK] as number[]).slice();
    while (floor.length < this.clocks.length) floor.push(0);
    for (let i = 1; i < this.clocks.length; i++) {
      if (this.live[i] === true) meetClock(floor, this.clocks[i] as number[]);
    }
    let count = 0;
    for (const history of this.histories.values()) count += history.prune(floor);
    this.segmentCount = count;
    this.pruneAt = Math.max(MIN_PRUNE_SEGMENTS, 2 * count);
  }
}
