import { ErrorCode, MemoryKind, OK_VOID, err, ok, unwrap, type Backend, type Device, type MemoryRange, type Result } from '@hs/streams';

/** The shape a downstream library writes by hand: a plain object, no hs base class. */
export interface PlainArenaResource {
  allocate(bytes: number, alignment: number): Result<MemoryRange | null>;
  deallocate(block: MemoryRange | null, bytes: number, alignment: number): Result<void>;
  readonly hostAccessible: true;
  readonly deviceAccessible: true;
  /** Blocks cut and not yet returned. */
  live(): number;
  dispose(): void;
}

/**
 * A bump arena over one managed allocation of `capacity` bytes, written as a plain object: blocks are cut
 * from the front, and the arena rewinds when every block came back. Stands in for a downstream allocator
 * (an ONNX Runtime arena, a caching allocator) injected into hs.
 */
export function plainArenaResource(backend: Backend, device: Device, capacity: number): PlainArenaResource {
  const memory = unwrap(backend.allocate({ kind: MemoryKind.CudaManaged, device, byteSize: capacity, alignment: 4096, label: 'plain arena' }));
  const liveBlocks = new Map<MemoryRange, number>();
  let top = 0;
  return {
    hostAccessible: true,
    deviceAccessible: true,
    allocate(bytes, alignment) {
      if (!Number.isSafeInteger(bytes) || bytes < 0 || !Number.isSafeInteger(alignment) || alignment < 1 || (alignment & (alignment - 1)) !== 0) {
        return err(ErrorCode.InvalidArgument, `plain arena: bad request of ${bytes} bytes aligned to ${alignment}`);
      }
      if (bytes === 0) return ok(null);
      const start = Math.ceil(top / alignment) * alignment;
      if (start + bytes > capacity) return err(ErrorCode.OutOfMemory, `plain arena: ${bytes} bytes do not fit in ${capacity - top} free bytes`);
      top = start + bytes;
      const block: MemoryRange = { memory, byteOffset: start, byteLength: bytes, label: `arena block @${start}` };
      liveBlocks.set(block, alignment);
      return ok(block);
    },
    deallocate(block, bytes, alignment) {
      if (block === null) return bytes === 0 ? OK_VOID : err(ErrorCode.InvalidArgument, 'plain arena: null block with bytes');
      if (!liveBlocks.has(block)) return err(ErrorCode.InvalidArgument, 'plain arena: block not from this arena or already returned');
      if (block.byteLength !== bytes) return err(ErrorCode.InvalidArgument, 'plain arena: size mismatch');
      if (liveBlocks.get(block) !== alignment) return err(ErrorCode.InvalidArgument, 'plain arena: alignment mismatch');
      liveBlocks.delete(block);
      if (liveBlocks.size === 0) top = 0;
      return OK_VOID;
    },
    live: () => liveBlocks.size,
    dispose: () => void backend.free(memory),
  };
}
