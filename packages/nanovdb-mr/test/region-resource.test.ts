import { describe, expect, it } from 'vitest';
import { Device, ErrorCode, HostBackend, HsError, MemoryKind, unwrap, type DeviceMemory, type MemoryRange } from '@hs/streams';
import { HostResource, RegionResource, ResourceBuffer, isResource, type MemoryBlock } from '../src/index.js';

const KiB = 1024;

/** A region of `bytes` bytes at `offset` inside a fresh allocation of `kind` (its address a multiple of 4096). */
function region(bytes: number, offset = 0, kind: MemoryKind = MemoryKind.Host): { backend: HostBackend; memory: DeviceMemory; range: MemoryRange } {
  const backend = new HostBackend();
  const device = kind === MemoryKind.Host || kind === MemoryKind.PinnedHost ? Device.cpu() : Device.cuda(0);
  const memory = unwrap(backend.allocate({ kind, device, byteSize: offset + bytes, alignment: 4096, label: 'region' }));
  return { backend, memory, range: { memory, byteOffset: offset, byteLength: bytes, label: 'test region' } };
}

function take(resource: RegionResource, bytes: number, alignment = 1): MemoryBlock {
  return unwrap(resource.allocate(bytes, alignment)) as MemoryBlock;
}

describe('RegionResource', () => {
  it('is a resource whose accessibility follows the memory kind of its region', () => {
    for (const [kind, host, device] of [
      [MemoryKind.Host, true, false],
      [MemoryKind.PinnedHost, true, true],
      [MemoryKind.CudaDevice, false, true],
      [MemoryKind.CudaManaged, true, true],
    ] as const) {
      const { range } = region(KiB, 0, kind);
      const r = new RegionResource(range);
      expect(isResource(r)).toBe(true);
      expect([r.kind, r.hostAccessible, r.deviceAccessible, r.device]).toEqual([kind, host, device, range.memory.device]);
    }
  });

  it('hands out the whole region at its start when the first request is the region (a pool backing)', () => {
    const { range } = region(8 * KiB);
    const r = new RegionResource(range, { label: 'slots' });
    const block = take(r, 8 * KiB, 256);
    expect([block.memory, block.byteOffset, block.byteLength]).toEqual([range.memory, 0, 8 * KiB]);
    expect([r.liveBlocks, r.liveBytes, r.freeBytes, r.largestFreeBytes]).toEqual([1, 8 * KiB, 0, 0]);
    const more = r.allocate(1, 1);
    expect(!more.ok && more.error.code).toBe(ErrorCode.OutOfMemory);
    unwrap(r.deallocate(block, 8 * KiB, 256));
    expect([r.liveBlocks, r.liveBytes, r.freeBytes, r.largestFreeBytes]).toEqual([0, 0, 8 * KiB, 8 * KiB]);
  });

  it('gives null for 0 bytes and takes it back with 0 bytes', () => {
    const r = new RegionResource(region(KiB).range);
    const none = unwrap(r.allocate(0, 256));
    expect(none).toBeNull();
    unwrap(r.deallocate(none, 0, 256));
    const wrong = r.deallocate(null, 4, 256);
    expect(!wrong.ok && wrong.error.code).toBe(ErrorCode.InvalidArgument);
    expect(r.liveBlocks).toBe(0);
  });

  it('is first-fit: a request takes the lowest free range that holds it', () => {
    const r = new RegionResource(region(10 * KiB).range);
    const [a, b, c, d] = [take(r, KiB), take(r, 2 * KiB), take(r, KiB), take(r, 3 * KiB)];
    expect([a, b, c, d].map((x) => x.byteOffset)).toEqual([0, KiB, 3 * KiB, 4 * KiB]);
    unwrap(r.deallocate(b, 2 * KiB, 1)); // hole at 1 KiB..3 KiB
    unwrap(r.deallocate(d, 3 * KiB, 1)); // hole at 4 KiB..10 KiB
    expect(take(r, 2 * KiB).byteOffset).toBe(KiB); // fits the first hole exactly
    expect(take(r, 512).byteOffset).toBe(4 * KiB); // the first hole is full now
  });

  it('fragments and fails with OutOfMemory when no single free range holds a request, though enough bytes are free', () => {
    const r = new RegionResource(region(8 * KiB).range);
    const blocks = Array.from({ length: 8 }, () => take(r, KiB));
    for (const [i, block] of blocks.entries()) if (i % 2 === 0) unwrap(r.deallocate(block, KiB, 1));
    expect([r.freeBytes, r.largestFreeBytes]).toEqual([4 * KiB, KiB]);
    const big = r.allocate(2 * KiB, 1);
    expect(!big.ok && big.error.code).toBe(ErrorCode.OutOfMemory);
    expect(!big.ok && big.error.message).toContain('largest free range 1024');
    expect(r.liveBlocks).toBe(4);
    expect(take(r, KiB).byteOffset).toBe(0);
  });

  it('coalesces a returned block with the free ranges on both sides, in any return order', () => {
    for (const order of [[0, 1, 2, 3], [3, 2, 1, 0], [1, 3, 0, 2], [2, 0, 3, 1]]) {
      const r = new RegionResource(region(4 * KiB).range);
      const blocks = [take(r, KiB), take(r, KiB), take(r, KiB), take(r, KiB)];
      for (const i of order) unwrap(r.deallocate(blocks[i] as MemoryBlock, KiB, 1));
      expect([r.freeBytes, r.largestFreeBytes]).toEqual([4 * KiB, 4 * KiB]);
      expect(take(r, 4 * KiB).byteOffset).toBe(0);
    }
  });

  it('joins the neighbours of a middle block into one range', () => {
    const r = new RegionResource(region(3 * KiB).range);
    const [a, b, c] = [take(r, KiB), take(r, KiB), take(r, KiB)];
    unwrap(r.deallocate(a, KiB, 1));
    unwrap(r.deallocate(c, KiB, 1));
    expect(r.largestFreeBytes).toBe(KiB);
    unwrap(r.deallocate(b, KiB, 1));
    expect(r.largestFreeBytes).toBe(3 * KiB);
  });

  it('honours alignment by address, also for a region that starts off the alignment; the skipped bytes stay free', () => {
    const { memory, range } = region(16 * KiB, 100);
    const r = new RegionResource(range);
    const address = (block: MemoryBlock): bigint => memory.address + BigInt(block.byteOffset);
    const small = take(r, 10, 1);
    expect(small.byteOffset).toBe(100);
    const aligned = take(r, 300, 4096);
    expect(address(aligned) % 4096n).toBe(0n);
    expect(aligned.byteOffset).toBe(4096);
    // The gap between 110 and 4096 is still free and is used by the next small request.
    const gap = take(r, 64, 64);
    expect(gap.byteOffset).toBe(128);
    expect(address(gap) % 64n).toBe(0n);
    for (const alignment of [2, 8, 256, 1024, 2048]) expect(address(take(r, 7, alignment)) % BigInt(alignment)).toBe(0n);
    const tooAligned = r.allocate(16, 2 ** 30);
    expect(!tooAligned.ok && tooAligned.error.code).toBe(ErrorCode.OutOfMemory);
  });

  it('refuses foreign blocks with InvalidArgument and a second return with InvalidState, leaving live blocks live', () => {
    const { backend, range } = region(4 * KiB);
    const r = new RegionResource(range);
    const other = new RegionResource(region(4 * KiB).range);
    const mine = take(r, KiB, 256);
    const theirs = take(other, KiB, 256);
    const host = new HostResource(backend);
    const hostBlock = unwrap(host.allocate(KiB, 256)) as MemoryBlock;
    for (const foreign of [theirs, hostBlock, { ...mine }]) {
      const refused = r.deallocate(foreign, KiB, 256);
      expect(!refused.ok && refused.error.code).toBe(ErrorCode.InvalidArgument);
    }
    expect(r.liveBlocks).toBe(1);
    unwrap(r.deallocate(mine, KiB, 256));
    const again = r.deallocate(mine, KiB, 256);
    expect(!again.ok && again.error.code).toBe(ErrorCode.InvalidState);
    // A stale block whose bytes were handed out again is still "already returned": the new block stays live.
    const reused = take(r, KiB, 256);
    expect(reused.byteOffset).toBe(mine.byteOffset);
    const stale = r.deallocate(mine, KiB, 256);
    expect(!stale.ok && stale.error.code).toBe(ErrorCode.InvalidState);
    expect(r.liveBlocks).toBe(1);
    unwrap(r.deallocate(reused, KiB, 256));
    unwrap(other.deallocate(theirs, KiB, 256));
    unwrap(host.deallocate(hostBlock, KiB, 256));
  });

  it('refuses a block returned with another size or alignment, and bad requests, with InvalidArgument', () => {
    const r = new RegionResource(region(4 * KiB).range);
    const block = take(r, KiB, 256);
    for (const [bytes, alignment] of [[KiB + 1, 256], [KiB, 128], [KiB, 512], [-1, 256], [KiB, 3]] as const) {
      const wrong = r.deallocate(block, bytes, alignment);
      expect(!wrong.ok && wrong.error.code).toBe(ErrorCode.InvalidArgument);
    }
    for (const [bytes, alignment] of [[-1, 256], [1.5, 256], [64, 3], [64, 0], [64, 2 ** 31]] as const) {
      const bad = r.allocate(bytes, alignment);
      expect(!bad.ok && bad.error.code).toBe(ErrorCode.InvalidArgument);
    }
    expect([r.liveBlocks, r.liveBytes]).toEqual([1, KiB]);
    unwrap(r.deallocate(block, KiB, 256));
  });

  it('keeps balanced accounting through a seeded random workload, blocks disjoint and inside the region', () => {
    const { range } = region(64 * KiB, 512);
    const r = new RegionResource(range);
    let seed = 0x2545f491;
    const random = (): number => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) / 2 ** 32;
    };
    const live: { block: MemoryBlock; bytes: number; alignment: number }[] = [];
    for (let step = 0; step < 2000; step++) {
      if (live.length > 0 && random() < 0.5) {
        const { block, bytes, alignment } = live.splice(Math.floor(random() * live.length), 1)[0]!;
        unwrap(r.deallocate(block, bytes, alignment));
      } else {
        const bytes = 1 + Math.floor(random() * 4 * KiB);
        const alignment = 2 ** Math.floor(random() * 10);
        const made = r.allocate(bytes, alignment);
        if (!made.ok) {
          expect(made.error.code).toBe(ErrorCode.OutOfMemory);
          continue;
        }
        live.push({ block: made.value as MemoryBlock, bytes, alignment });
      }
      expect(r.liveBytes).toBe(live.reduce((sum, l) => sum + l.bytes, 0));
    }
    const sorted = live.map((l) => l.block).sort((x, y) => x.byteOffset - y.byteOffset);
    for (const [i, block] of sorted.entries()) {
      expect(block.byteOffset).toBeGreaterThanOrEqual(range.byteOffset);
      expect(block.byteOffset + block.byteLength).toBeLessThanOrEqual(range.byteOffset + range.byteLength);
      if (i > 0) expect(sorted[i - 1]!.byteOffset + sorted[i - 1]!.byteLength).toBeLessThanOrEqual(block.byteOffset);
    }
    for (const { block, bytes, alignment } of live) unwrap(r.deallocate(block, bytes, alignment));
    expect([r.liveBlocks, r.liveBytes, r.freeBytes, r.largestFreeBytes]).toEqual([0, 0, 64 * KiB, 64 * KiB]);
  });

  it('backs a ResourceBuffer, and refuses to allocate once the region memory was freed', () => {
    const { backend, memory, range } = region(4 * KiB);
    const r = new RegionResource(range);
    const buffer = unwrap(ResourceBuffer.allocate(backend, r, 256));
    expect(buffer.data?.memory).toBe(memory);
    expect(r.liveBytes).toBe(256);
    buffer.dispose();
    expect(r.liveBytes).toBe(0);
    unwrap(backend.free(memory));
    const late = r.allocate(64, 64);
    expect(!late.ok && late.error.code).toBe(ErrorCode.InvalidState);
  });

  it('throws InvalidArgument for a region that is not a range inside its allocation', () => {
    const { memory } = region(KiB);
    for (const bad of [null, {}, { memory, byteOffset: 0, byteLength: KiB + 1, label: 'x' }, { memory, byteOffset: -1, byteLength: 8, label: 'x' }, { memory, byteOffset: 0.5, byteLength: 8, label: 'x' }]) {
      expect(() => new RegionResource(bad as unknown as MemoryRange)).toThrow(HsError);
    }
    const empty = new RegionResource({ memory, byteOffset: KiB, byteLength: 0, label: 'empty' });
    const none = empty.allocate(1, 1);
    expect(!none.ok && none.error.code).toBe(ErrorCode.OutOfMemory);
  });
});
