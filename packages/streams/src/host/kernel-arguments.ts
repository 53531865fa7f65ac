import type { MemoryRange } from '../backend.js';
import type { HostMemory } from './host-memory.js';

/**
 * Builds the arguments of a host kernel call without per-call array allocation: one reusable array per
 * argument count (a backend runs one op at a time, so they are never in use twice), and one cached
 * `Uint8Array` view per `MemoryRange` object. The arrays are valid only during the kernel call.
 */
export class KernelArguments {
  private readonly readSets: Uint8Array[][] = [];
  private readonly writeSets: Uint8Array[][] = [];
  private readonly paramSets: number[][] = [];
  private readonly views = new WeakMap<MemoryRange, Uint8Array>();

  /** Views of `ranges[0..count)`, in a reused array of exactly `count` entries. */
  readViews(ranges: readonly MemoryRange[], count: number): Uint8Array[] {
    return this.fill(this.readSets, ranges, count);
  }

  /** Views of `ranges[0..count)`, in a reused array distinct from `readViews`'. */
  writeViews(ranges: readonly MemoryRange[], count: number): Uint8Array[] {
    return this.fill(this.writeSets, ranges, count);
  }

  /** `params[0..count)` in a reused array of exactly `count` entries. */
  params(params: readonly number[], count: number): number[] {
    const out = (this.paramSets[count] ??= new Array<number>(count).fill(0));
    for (let i = 0; i < count; i++) out[i] = params[i] as number;
    return out;
  }

  private fill(sets: Uint8Array[][], ranges: readonly MemoryRange[], count: number): Uint8Array[] {
    const out = (sets[count] ??= new Array<Uint8Array>(count));
    for (let i = 0; i < count; i++) out[i] = this.view(ranges[i] as MemoryRange);
    return out;
  }

  private view(range: MemoryRange): Uint8Array {
    const bytes = (range.memory as HostMemory).bytes;
    const offset = bytes.byteOffset + range.byteOffset;
    const cached = this.views.get(range);
    if (cached !== undefined && cached.buffer === bytes.buffer && cached.byteOffset === offset && cached.byteLength === range.byteLength) {
      return cached;
    }
    const view = new Uint8Array(bytes.buffer, offset, range.byteLength);
    this.views.set(range, view);
    return view;
  }
}
