import { ErrorCode, HsError, OK_VOID, err, ok, isDeviceAccessible, isHostAccessible, type Device, type MemoryKind, type MemoryRange, type Result } from '@hs/streams';
import { requestProblem } from '../allocation-checks.js';
import { DEFAULT_ALIGNMENT, type MemoryBlock, type SyncResource } from '../resource.js';
import { OK_NULL_BLOCK } from './backend-resource.js';

/** Options of `new RegionResource(region, options)`. */
export interface RegionResourceOptions {
  /** Name used in error messages and block labels; default `RegionResource`. */
  readonly label?: string;
}

/** A free range of the region: bytes `start` (inclusive) to `end` (exclusive), offsets in the region's allocation. */
interface Hole {
  start: number;
  end: number;
}

/** Largest alignment a request may ask for (the resources' limit, 2^30 bytes); address residues are kept modulo it. */
const ALIGNMENT_LIMIT = 2 ** 30;

/**
 * A synchronous resource that cuts its blocks from one caller-owned region: a `MemoryRange` of any
 * backend allocation (host, pinnedHost, cudaDevice or cudaManaged memory, allocated or adopted by the
 * caller). It is a first-fit sub-allocator: the free ranges are kept in address order, a request takes the
 * lowest free range that holds `bytes` bytes at an address that is a multiple of `alignment` (the bytes
 * skipped to get there stay free), and a returned block is merged with the free ranges on either side, so
 * returning every block gives back the whole region as one range. An empty region never fragments: its
 * first request of `region.byteLength` bytes (at an alignment the region's start meets) is the region itself.
 *
 * Ownership: the resource never allocates or frees backend memory. The caller keeps the region's
 * allocation alive while blocks are live and frees it afterwards; blocks are valid on every stream at
 * once (the synchronous tier), and a block must be quiescent when it is returned. `hostAccessible` and
 * `deviceAccessible` follow the region's memory kind. Blocks are known by identity: return the object
 * `allocate` gave.
 *
 * Errors (Result): `allocate(0)` gives `null`; `OutOfMemory` when no free range holds the request (nothing
 * is allocated; the message gives the largest free range); `InvalidArgument` for a bad size or alignment, a
 * block this resource did not hand out, or a block returned with another size or alignment than it was
 * allocated with (it stays live); `InvalidState` for a block already returned, and for `allocate` once the
 * region's memory was freed.
 * Spec: "Resource (allocator)", synchronous tier (nanovdb-memory-resources): a custom allocator behind the
 * same two methods.
 *
 * `TensorPool.materialize(backend, { ..., resource: region })` takes its one backing block the same way:
 * a region of exactly the pool's bytes at offset 0 gives the pool that region (slot `i` at `i * slotStride`).
 *
 * @example
 * ```ts
 * import { Device, HostBackend, MemoryKind, unwrap } from '@hs/streams';
 * import { RegionResource, ResourceBuffer } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * // one 1 MiB allocation, shared out as blocks (its owner frees it once every block came back)
 * const memory = unwrap(backend.allocate({ kind: MemoryKind.Host, device: Device.cpu(), byteSize: 1 << 20 }));
 * const region = new RegionResource({ memory, byteOffset: 0, byteLength: memory.byteSize, label: 'scratch' });
 * const a = unwrap(region.allocate(4096, 256)); // bytes 0..4095 of the region
 * const b = unwrap(region.allocate(1000, 64)); // bytes 4096..5095
 * const buffer = unwrap(ResourceBuffer.allocate(backend, region, 256)); // a buffer cut from the region, not the backend
 * console.log(`${region.liveBlocks} blocks live, ${region.freeBytes} bytes free`);
 * buffer.dispose();
 * unwrap(region.deallocate(a, 4096, 256));
 * unwrap(region.deallocate(b, 1000, 64)); // coalesced: the region is one free range again
 * console.log(`free: ${region.freeBytes === memory.byteSize}`);
 * unwrap(backend.free(memory));
 * ```
 */
export class RegionResource implements SyncResource {
  /** The region blocks are cut from. */
  readonly region: MemoryRange;
  /** Memory kind of every block (the region's). */
  readonly kind: MemoryKind;
  /** Device of every block (the region's; `Device.cpu()` for host and pinned memory). */
  readonly device: Device;
  /** True for host, pinnedHost and cudaManaged memory. */
  readonly hostAccessible: boolean;
  /** True for pinnedHost, cudaDevice and cudaManaged memory. */
  readonly deviceAccessible: boolean;
  /** Name used in error messages and block labels. */
  readonly label: string;

  /** Free ranges in address order; neighbours never touch (they are merged). */
  readonly #holes: Hole[];
  /** Live blocks and the alignment each was allocated with. */
  readonly #live = new Map<MemoryBlock, number>();
  /** Blocks already returned, so a second return is told apart from a foreign block. */
  readonly #returned = new WeakSet<MemoryBlock>();
  /** `region.memory.address` modulo 2^30, so an offset's alignment is found without BigInt arithmetic. */
  readonly #addressResidue: number;
  #liveBytes = 0;

  /**
   * @param region The caller's range: `byteOffset` and `byteLength` are non-negative safe integers (bytes)
   *   and the range lies inside `region.memory`. The resource keeps the object; it does not copy the bytes.
   * @throws HsError `InvalidArgument` when `region` is not such a range or `options` is not an object.
   */
  constructor(region: MemoryRange, options: RegionResourceOptions = {}) {
    if (typeof options !== 'object' || options === null) throw new HsError(ErrorCode.InvalidArgument, 'RegionResource: options must be an object');
    const label = options.label ?? 'RegionResource';
    const memory = (region as Partial<MemoryRange> | null)?.memory;
    if (typeof memory !== 'object' || memory === null || typeof memory.address !== 'bigint' || !Number.isSafeInteger(memory.byteSize)) {
      throw new HsError(ErrorCode.InvalidArgument, `${label}: expected a MemoryRange { memory, byteOffset, byteLength } of a backend allocation`);
    }
    const { byteOffset, byteLength } = region;
    if (!Number.isSafeInteger(byteOffset) || !Number.isSafeInteger(byteLength) || byteOffset < 0 || byteLength < 0 || byteOffset + byteLength > memory.byteSize) {
      throw new HsError(
        ErrorCode.InvalidArgument,
        `${label}: the region (byteOffset ${String(byteOffset)}, byteLength ${String(byteLength)}) must lie inside its allocation "${memory.label}" of ${memory.byteSize} bytes`,
      );
    }
    this.region = region;
    this.kind = memory.kind;
    this.device = memory.device;
    this.hostAccessible = isHostAccessible(memory.kind);
    this.deviceAccessible = isDeviceAccessible(memory.kind);
    this.label = label;
    this.#holes = byteLength === 0 ? [] : [{ start: byteOffset, end: byteOffset + byteLength }];
    this.#addressResidue = Number(memory.address % BigInt(ALIGNMENT_LIMIT));
  }

  /** Blocks handed out and not yet returned. */
  get liveBlocks(): number {
    return this.#live.size;
  }

  /** Bytes of the live blocks (as requested). */
  get liveBytes(): number {
    return this.#liveBytes;
  }

  /** Bytes of the region not in a live block (alignment gaps included). */
  get freeBytes(): number {
    return this.region.byteLength - this.#liveBytes;
  }

  /** Bytes of the largest free range: with alignment 1, the largest request that succeeds now. */
  get largestFreeBytes(): number {
    let largest = 0;
    for (const hole of this.#holes) largest = Math.max(largest, hole.end - hole.start);
    return largest;
  }

  /**
   * Cuts `bytes` bytes (a non-negative safe integer) whose address is a multiple of `alignment` (a power
   * of two up to 2^30; default 256) from the lowest free range that holds them; `null` for 0 bytes. Errors
   * as the class describes (`OutOfMemory`, `InvalidArgument`, `InvalidState`).
   */
  allocate(bytes: number, alignment: number = DEFAULT_ALIGNMENT): Result<MemoryBlock | null> {
    const problem = requestProblem(`${this.label}.allocate`, bytes, alignment);
    if (problem !== null) return problem;
    if (bytes === 0) return OK_NULL_BLOCK;
    const memory = this.region.memory;
    if (memory.freed) return err(ErrorCode.InvalidState, `${this.label}.allocate: the region's memory "${memory.label}" was freed`);
    const holes = this.#holes;
    for (let i = 0; i < holes.length; i++) {
      const hole = holes[i] as Hole;
      const start = this.#alignUp(hole.start, alignment);
      const end = start + bytes;
      if (end > hole.end) continue;
      if (start === hole.start && end === hole.end) holes.splice(i, 1);
      else if (start === hole.start) hole.start = end;
      else if (end === hole.end) hole.end = start;
      else {
        holes.splice(i + 1, 0, { start: end, end: hole.end });
        hole.end = start;
      }
      const block: MemoryBlock = { memory, byteOffset: start, byteLength: bytes, label: `${this.label} block @${start - this.region.byteOffset}` };
      this.#live.set(block, alignment);
      this.#liveBytes += bytes;
      return ok(block);
    }
    return err(
      ErrorCode.OutOfMemory,
      `${this.label}.allocate: no free range holds ${bytes} bytes aligned to ${alignment} (region of ${this.region.byteLength} bytes, ${this.freeBytes} free, largest free range ${this.largestFreeBytes})`,
    );
  }

  /**
   * Returns a block from `allocate` (or `null` with 0 bytes) with the `bytes` and `alignment` it was
   * allocated with, merging it with the free ranges next to it. The block must be quiescent. Errors as the
   * class describes (`InvalidArgument`, `InvalidState`); a refused block stays as it was.
   */
  deallocate(block: MemoryBlock | null, bytes: number, alignment: number = DEFAULT_ALIGNMENT): Result<void> {
    const who = `${this.label}.deallocate`;
    const problem = requestProblem(who, bytes, alignment);
    if (problem !== null) return problem;
    if (block === null) return bytes === 0 ? OK_VOID : err(ErrorCode.InvalidArgument, `${who}: a null block is returned with 0 bytes, got ${bytes}`);
    if (typeof block !== 'object') return err(ErrorCode.InvalidArgument, `${who}: expected a MemoryBlock from allocate, got ${typeof block}`);
    const allocatedWith = this.#live.get(block);
    if (allocatedWith === undefined) {
      if (this.#returned.has(block)) return err(ErrorCode.InvalidState, `${who}: block "${block.label}" was already returned`);
      return err(ErrorCode.InvalidArgument, `${who}: block "${String(block.label)}" was not allocated by this ${this.label}; return the block object its allocate gave`);
    }
    if (block.byteLength !== bytes) {
      return err(ErrorCode.InvalidArgument, `${who}: block "${block.label}" is ${block.byteLength} bytes but ${bytes} were passed; return a block with the size it was allocated with`);
    }
    if (allocatedWith !== alignment) {
      return err(
        ErrorCode.InvalidArgument,
        `${who}: block "${block.label}" was allocated with alignment ${allocatedWith} but ${alignment} was passed; return a block with the alignment it was allocated with`,
      );
    }
    this.#live.delete(block);
    this.#returned.add(block);
    this.#liveBytes -= bytes;
    this.#free(block.byteOffset, block.byteOffset + bytes);
    return OK_VOID;
  }

  /** The lowest offset at or after `offset` whose address is a multiple of `alignment` (at most 2^30). */
  #alignUp(offset: number, alignment: number): number {
    const residue = ((this.#addressResidue % alignment) + (offset % alignment)) % alignment;
    return residue === 0 ? offset : offset + (alignment - residue);
  }

  /** Puts bytes `start..end` back as free, merged with a free range that ends at `start` or begins at `end`. */
  #free(start: number, end: number): void {
    const holes = this.#holes;
    // The first free range after the block (binary search: ranges are in address order).
    let lo = 0;
    let hi = holes.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((holes[mid] as Hole).start < start) lo = mid + 1;
      else hi = mid;
    }
    const before = lo > 0 ? (holes[lo - 1] as Hole) : undefined;
    const after = lo < holes.length ? (holes[lo] as Hole) : undefined;
    const joinsBefore = before !== undefined && before.end === start;
    const joinsAfter = after !== undefined && after.start === end;
    if (joinsBefore && joinsAfter) {
      before.end = after.end;
      holes.splice(lo, 1);
    } else if (joinsBefore) before.end = end;
    else if (joinsAfter) after.start = start;
    else holes.splice(lo, 0, { start, end });
  }
}
