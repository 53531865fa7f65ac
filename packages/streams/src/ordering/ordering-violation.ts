/**
 * The hazard an ordering violation found.
 * - `read-after-write`: a read not ordered after the last write of overlapping bytes.
 * - `write-after-write`: a write not ordered after the last write of overlapping bytes.
 * - `write-after-read`: a write not ordered after an earlier read of overlapping bytes (what release
 *   streams prevent when a pool slot is reused).
 */
export type OrderingHazard = 'read-after-write' | 'write-after-write' | 'write-after-read';

/** One side of an ordering violation. */
export interface OrderingAccess {
  /** Label of the stream that made the access, or `host` for the host thread. */
  readonly stream: string;
  /** Label of the range accessed (the tensor). */
  readonly rangeLabel: string;
  /** The operation: `kernel <name>`, `memcpy`, `memset`, `copy from host`, `copy to host`, `host read`, `host write`. */
  readonly operation: string;
  /** Whether the operation read or wrote the range. */
  readonly access: 'read' | 'write';
}

/**
 * A report of the ordering checker: two accesses to overlapping bytes, at least one a write, with no
 * chain of stream order, event record/wait or host synchronization ordering the later after the earlier.
 */
export interface OrderingViolation {
  /** Which hazard: `read-after-write`, `write-after-write` or `write-after-read`. */
  readonly hazard: OrderingHazard;
  /** The access that should have come first (the last write, or a read since it). */
  readonly earlier: OrderingAccess;
  /** The access found unordered (checked when it was enqueued, or declared for the host). */
  readonly later: OrderingAccess;
  /** Label of the allocation both ranges lie in. */
  readonly memoryLabel: string;
  /** Start of the overlapping bytes, in bytes from the start of the allocation. */
  readonly byteOffset: number;
  /** Length of the overlapping bytes, in bytes. */
  readonly byteLength: number;
  /** One readable sentence naming both streams, the tensor, the hazard and the usual fix. */
  readonly message: string;
}

/** Builds the violation with its message. */
export function makeViolation(
  hazard: OrderingHazard,
  earlier: OrderingAccess,
  later: OrderingAccess,
  memoryLabel: string,
  byteOffset: number,
  byteLength: number,
): OrderingViolation {
  const where = `bytes ${byteOffset}..${byteOffset + byteLength - 1} of "${memoryLabel}"`;
  const subject = later.stream === 'host' ? 'the host' : `stream "${later.stream}"`;
  const verb = later.access === 'read' ? 'reads' : 'writes';
  const fix =
    later.stream === 'host'
      ? `synchronize the host on an event recorded on "${earlier.stream}" after the ${earlier.access} before touching the memory`
      : hazard === 'write-after-read'
        ? `record a release event on "${earlier.stream}" after the read and make "${later.stream}" wait on it (or observe it complete) before reusing the memory`
        : `record an event on "${earlier.stream}" after the write and make "${later.stream}" wait on it`;
  const message =
    `${hazard} hazard on "${later.rangeLabel}" (${where}): ${subject} ${verb} it (${later.operation}) ` +
    `without being ordered after the ${earlier.access} by stream "${earlier.stream}" ` +
    `(${earlier.operation} of "${earlier.rangeLabel}"); ${fix}`;
  return Object.freeze({ hazard, earlier, later, memoryLabel, byteOffset, byteLength, message });
}
