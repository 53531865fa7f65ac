import type { ElementType } from './element-type.js';
import type { MemoryBlock } from './resource.js';

/**
 * What `ResourceBuffer` and `BufferView` share (the static interface a `GridHandle` holds): a span of `size`
 * elements of type `element` starting at `data`. Spec: "BufferView<T> … satisfies the same static interface".
 */
export interface ElementSpan<E extends ElementType = ElementType> {
  /** The bytes, or `null` when the span is empty. */
  readonly data: MemoryBlock | null;
  /** Element type. */
  readonly element: E;
  /** Length in elements. */
  readonly size: number;
  /** Length in bytes (`size * element.BYTES_PER_ELEMENT`). */
  readonly sizeBytes: number;
  /** True when `size` is 0. */
  readonly empty: boolean;
}
