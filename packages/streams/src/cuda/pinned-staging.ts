import type { CudaNativeBinding } from '@hs/cuda-native';

/** One page-locked block used to stage copies between JS buffers and device memory. */
export interface StagingBlock {
  readonly address: bigint;
  readonly byteSize: number;
  readonly buffer: ArrayBuffer;
  readonly view: Uint8Array;
  /** Event recorded after the block's last use; 0n until first use. */
  readonly event: bigint;
  inUse: boolean;
}

/** Smallest staging block, bytes (64 KiB). */
const MIN_BLOCK = 64 * 1024;

/**
 * Page-locked staging blocks for copies from and to JS buffers (pageable memory, which CUDA may copy
 * synchronously and so deadlock with host functions waiting for the JS thread). A block is reused once
 * the event recorded after its last use completed; sizes are powers of two from 64 KiB.
 */
export class PinnedStaging {
  private readonly blocks: StagingBlock[] = [];

  constructor(private readonly binding: CudaNativeBinding, private readonly device: number) {}

  /** A free block of at least `byteSize` bytes; allocates one when none is free. @throws Error from CUDA. */
  acquire(byteSize: number): StagingBlock {
    for (const b of this.blocks) {
      if (b.inUse || b.byteSize < byteSize) continue;
      if (b.event !== 0n && this.binding.eventQuery(b.event) !== 0) continue;
      b.inUse = true;
      return b;
    }
    const size = Math.max(MIN_BLOCK, 2 ** Math.ceil(Math.log2(byteSize)));
    const address = this.binding.mallocHost(size);
    const buffer = this.binding.externalArrayBuffer(address, size);
    const block: StagingBlock = { address, byteSize: size, buffer, view: new Uint8Array(buffer), event: this.binding.eventCreate(this.device, false), inUse: true };
    this.blocks.push(block);
    this.blocks.sort((a, b) => a.byteSize - b.byteSize);
    return block;
  }

  /** Marks `block` reusable once the work enqueued on `stream` so far completes. */
  release(block: StagingBlock, stream: bigint): void {
    this.binding.eventRecord(block.event, stream);
    block.inUse = false;
  }

  /** Marks `block` reusable now (its bytes were already taken on the JS thread). */
  giveBack(block: StagingBlock): void {
    block.inUse = false;
  }

  /** Frees every block after `after` (an event capturing all earlier work) completes. */
  dispose(after: (kind: 1, address: bigint) => void): void {
    for (const b of this.blocks) {
      this.binding.detachArrayBuffer(b.buffer);
      this.binding.eventDestroy(b.event);
      after(1, b.address);
    }
    this.blocks.length = 0;
  }
}
