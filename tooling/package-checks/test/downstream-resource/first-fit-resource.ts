import { ErrorCode, MemoryKind, OK_VOID, err, ok, unwrap, type Backend, type DeviceMemory, type Result } from '@hs/streams';
import type { MemoryBlock, SyncResource } from '@hs/nanovdb-mr';

/** A hole of free bytes, `[start, end)` as offsets into the arena. */
interface Hole {
  start: number;
  end: number;
}

/**
 * What a downstream author writes: a first-fit allocator over one managed allocation of `capacity`
 * bytes, in plain TypeScript on the `SyncResource` interface. Free holes are kept sorted by offset and
 * merged with their neighbours when a block comes back.
 */
export class FirstFitResource implements SyncResource {
  readonly hostAccessible = true;
  readonly deviceAccessible = true;
  readonly #backend: Backend;
  readonly #arena: DeviceMemory;
  #holes: Hole[];
  /** Alignment each live block was allocated with. */
  readonly #live = new Map<MemoryBlock, number>();

  constructor(backend: Backend, capacity: number) {
    this.#backend = backend;
    const device = backend.devices[0];
    if (device === undefined) throw new Error('first-fit: the backend has no CUDA device');
    this.#arena = unwrap(backend.allocate({ kind: MemoryKind.CudaManaged, device, byteSize: capacity, label: 'first-fit arena' }));
    this.#holes = [{ start: 0, end: capacity }];
  }

  allocate(bytes: number, alignment: number): Result<MemoryBlock | null> {
    if (!Number.isSafeInteger(bytes) || bytes < 0 || !Number.isSafeInteger(alignment) || alignment < 1 || (alignment & (alignment - 1)) !== 0) {
      return err(ErrorCode.InvalidArgument, `first-fit: a request needs a byte count >= 0 and a power-of-two alignment, got ${bytes} bytes aligned to ${alignment}`);
    }
    if (bytes === 0) return ok(null);
    for (const [i, hole] of this.#holes.entries()) {
      const misalignment = Number((this.#arena.address + BigInt(hole.start)) % BigInt(alignment));
      const start = misalignment === 0 ? hole.start : hole.start + alignment - misalignment;
      if (start + bytes > hole.end) continue;
      const rest = [{ start: hole.start, end: start }, { start: start + bytes, end: hole.end }].filter((h) => h.end > h.start);
      this.#holes.splice(i, 1, ...rest);
      const block: MemoryBlock = { memory: this.#arena, byteOffset: start, byteLength: bytes, label: `first-fit block @${start}` };
      this.#live.set(block, alignment);
      return ok(block);
    }
    return err(ErrorCode.OutOfMemory, `first-fit: no free hole holds ${bytes} bytes aligned to ${alignment}`);
  }

  deallocate(block: MemoryBlock | null, bytes: number, alignment: number): Result<void> {
    if (block === null) return bytes === 0 ? OK_VOID : err(ErrorCode.InvalidArgument, `first-fit: a null block comes back with 0 bytes, not ${bytes}`);
    const allocatedWith = this.#live.get(block);
    if (allocatedWith === undefined) return err(ErrorCode.InvalidArgument, 'first-fit: the block is not a live block of this resource');
    if (bytes !== block.byteLength || alignment !== allocatedWith) {
      return err(ErrorCode.InvalidArgument, `first-fit: the block of ${block.byteLength} bytes aligned to ${allocatedWith} came back as ${bytes} bytes aligned to ${alignment}`);
    }
    this.#live.delete(block);
    const holes = [...this.#holes, { start: block.byteOffset, end: block.byteOffset + bytes }].sort((a, b) => a.start - b.start);
    this.#holes = holes.reduce<Hole[]>((merged, hole) => {
      const last = merged.at(-1);
      if (last !== undefined && last.end === hole.start) last.end = hole.end;
      else merged.push({ ...hole });
      return merged;
    }, []);
    return OK_VOID;
  }

  /** Frees the arena; every block must have come back. */
  dispose(): void {
    unwrap(this.#backend.free(this.#arena));
  }
}
