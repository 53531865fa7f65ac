import { clockCovers } from './vector-clock.js';

/** One access kept for ordering checks: who (clock owner and its access number), what and how. */
export interface AccessRecord {
  /** Clock owner index (0 = host thread). */
  readonly owner: number;
  /** The owner's access number. */
  readonly epoch: number;
  /** Label of the range accessed (the tensor). */
  readonly rangeLabel: string;
  /** Operation that accessed it (`kernel hs.x`, `memcpy`, `host read`). */
  readonly operation: string;
}

/** Bytes `[start, end)` of an allocation sharing one last write and the reads since it (one per owner). */
export class HistorySegment {
  constructor(
    public start: number,
    public end: number,
    public write: AccessRecord | null,
    public reads: AccessRecord[],
  ) {}
}

/**
 * The access history of one allocation at byte-range granularity: sorted, contiguous segments covering
 * `[0, byteSize)`. Each keeps only the last write and, per clock owner, its latest read since that write,
 * so a segment's size is bounded by the number of streams.
 */
export class AccessHistory {
  readonly segments: HistorySegment[];

  constructor(private readonly byteSize: number) {
    this.segments = [new HistorySegment(0, byteSize, null, [])];
  }

  /** Splits segments so that `start` and `end` are boundaries; returns the index of the segment at `start`. */
  isolate(start: number, end: number): number {
    const first = this.splitAt(start);
    this.splitAt(end);
    return first;
  }

  /** Replaces the segments `[first, …)` up to byte `end` by one segment last written by `write`. */
  recordWrite(first: number, end: number, write: AccessRecord): void {
    const segs = this.segments;
    let last = first;
    while ((segs[last] as HistorySegment).end < end) last++;
    const seg = segs[first] as HistorySegment;
    seg.end = end;
    seg.write = write;
    seg.reads.length = 0;
    if (last > first) segs.splice(first + 1, last - first);
  }

  /** Records `read` as its owner's latest read of `seg`. */
  static recordRead(seg: HistorySegment, read: AccessRecord): void {
    const reads = seg.reads;
    for (let i = 0; i < reads.length; i++) {
      if ((reads[i] as AccessRecord).owner === read.owner) {
        reads[i] = read;
        return;
      }
    }
    reads.push(read);
  }

  /**
   * Forgets every access ordered before `floor` (a clock every live stream and the host are ordered
   * after), then merges neighbouring segments with the same last write and reads. Returns the segment count.
   */
  prune(floor: readonly number[]): number {
    const segs = this.segments;
    let w = 0;
    for (let r = 0; r < segs.length; r++) {
      const seg = segs[r] as HistorySegment;
      if (seg.write !== null && clockCovers(floor, seg.write.owner, seg.write.epoch)) seg.write = null;
      const reads = seg.reads;
      let k = 0;
      for (let i = 0; i < reads.length; i++) {
        const read = reads[i] as AccessRecord;
        if (!clockCovers(floor, read.owner, read.epoch)) reads[k++] = read;
      }
      reads.length = k;
      const prev = w > 0 ? (segs[w - 1] as HistorySegment) : null;
      if (prev !== null && prev.write === seg.write && sameReads(prev.reads, reads)) {
        prev.end = seg.end;
      } else {
        segs[w++] = seg;
      }
    }
    segs.length = w;
    return w;
  }

  /** Index of the segment that starts at `at`, splitting the one containing it if needed. */
  private splitAt(at: number): number {
    const segs = this.segments;
    if (at >= this.byteSize) return segs.length;
    let lo = 0;
    let hi = segs.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if ((segs[mid] as HistorySegment).start <= at) lo = mid;
      else hi = mid - 1;
    }
    const seg = segs[lo] as HistorySegment;
    if (seg.start === at) return lo;
    segs.splice(lo + 1, 0, new HistorySegment(at, seg.end, seg.write, seg.reads.slice()));
    seg.end = at;
    return lo + 1;
  }
}

/** True when both lists hold the same records (each list has at most one record per owner). */
function sameReads(a: readonly AccessRecord[], b: readonly AccessRecord[]): boolean {
  if (a.length !== b.length) return false;
  for (const record of a) if (!b.includes(record)) return false;
  return true;
}
