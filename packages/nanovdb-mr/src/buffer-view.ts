import { ErrorCode, HsError, err, ok, type Result } from '@hs/streams';
import type { ElementSpan } from './element-span.js';
import { isElementType, type ElementType } from './element-type.js';
import type { MemoryBlock } from './resource.js';

/**
 * A typed, non-owning view of `size` elements at `data` (span semantics): no resource, no stream, never
 * frees. It wraps memory owned elsewhere (a `ResourceBuffer`, a pool slot, a foreign tensor's allocation) so a
 * `GridHandle` can hold externally owned bytes with zero copies. Immutable; cheap to copy.
 * Spec: "cuda::BufferView<T> (view)".
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { BufferView, GridHandle, GridType, HostResource, ResourceBuffer, pointsToGrid } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const host = new HostResource(backend);
 * const built = unwrap(pointsToGrid(backend, host, { space: 'index', coords: new Int32Array([1, 2, 3]) }, { gridType: GridType.Float }));
 * // grid bytes owned elsewhere (here a buffer of ours; a pool slot or a foreign tensor works the same)
 * const owned = unwrap(ResourceBuffer.allocate(backend, host, built.sizeBytes));
 * unwrap(owned.hostView()).set(unwrap(built.hostBytes()));
 * const view = unwrap(BufferView.of(owned.data, owned.size)); // no copy, never frees
 * const handle = unwrap(GridHandle.fromHostBytes(backend, view));
 * console.log(`${view.sizeBytes} viewed bytes, voxel (1,2,3) active: ${unwrap(handle.accessor()).isActive(1, 2, 3)}`);
 * handle.dispose(); // leaves the bytes alone
 * owned.dispose(); // their owner frees them
 * built.dispose();
 * ```
 */
export class BufferView<E extends ElementType = Uint8ArrayConstructor> implements ElementSpan<E> {
  private constructor(
    /** The viewed bytes, `null` for an empty view. */
    readonly data: MemoryBlock | null,
    /** Element type. */
    readonly element: E,
    /** Length in elements. */
    readonly size: number,
  ) {}

  /**
   * A view of `count` elements of `element` (default `Uint8Array`, bytes) at the start of `block`.
   * InvalidArgument when `block` is `null` with `count > 0`, `count` is not a non-negative safe integer,
   * or the block is shorter than `count` elements; ArithmeticOverflow when the byte size is not a safe integer.
   * @throws HsError InvalidArgument when `element` is not a supported typed-array constructor.
   */
  static of<E extends ElementType = Uint8ArrayConstructor>(block: MemoryBlock | null, count: number, element?: E): Result<BufferView<E>> {
    const el = (element ?? Uint8Array) as E;
    if (!isElementType(el)) throw new HsError(ErrorCode.InvalidArgument, 'BufferView.of: element must be a typed-array constructor such as Float32Array');
    if (!Number.isSafeInteger(count) || count < 0) return err(ErrorCode.InvalidArgument, `BufferView.of: count must be a non-negative safe integer, got ${String(count)}`);
    const bytes = count * el.BYTES_PER_ELEMENT;
    if (!Number.isSafeInteger(bytes)) return err(ErrorCode.ArithmeticOverflow, `BufferView.of: ${count} elements of ${el.BYTES_PER_ELEMENT} bytes exceed 2^53 bytes`);
    if (block === null) {
      return count === 0
        ? ok(new BufferView<E>(null, el, 0))
        : err(ErrorCode.InvalidArgument, `BufferView.of: a null pointer cannot hold ${count} elements; pass a block or count 0`);
    }
    if (block.byteLength < bytes) {
      return err(ErrorCode.InvalidArgument, `BufferView.of: block "${block.label}" has ${block.byteLength} bytes, fewer than ${count} elements of ${el.BYTES_PER_ELEMENT} bytes`);
    }
    return ok(new BufferView<E>(count === 0 ? null : { ...block, byteLength: bytes }, el, count));
  }

  /** A view of all of `span` (a `ResourceBuffer` or another view). */
  static over<E extends ElementType>(span: ElementSpan<E>): BufferView<E> {
    return new BufferView<E>(span.data, span.element, span.size);
  }

  /** Length in bytes. */
  get sizeBytes(): number {
    return this.size * this.element.BYTES_PER_ELEMENT;
  }

  /** True when the view has no elements. */
  get empty(): boolean {
    return this.size === 0;
  }
}
