/** Typed arrays a buffer's elements can be viewed as on the host. */
export type ElementArray =
  | Uint8Array
  | Int8Array
  | Uint16Array
  | Int16Array
  | Uint32Array
  | Int32Array
  | Float32Array
  | Float64Array
  | BigInt64Array
  | BigUint64Array;

/**
 * The element type of a `ResourceBuffer` or `BufferView`, named by its typed-array constructor (`Uint8Array` for
 * raw bytes, `Float32Array`, …): its `BYTES_PER_ELEMENT` is the element size in bytes, and host views
 * are instances of it.
 */
export type ElementType =
  | Uint8ArrayConstructor
  | Int8ArrayConstructor
  | Uint16ArrayConstructor
  | Int16ArrayConstructor
  | Uint32ArrayConstructor
  | Int32ArrayConstructor
  | Float32ArrayConstructor
  | Float64ArrayConstructor
  | BigInt64ArrayConstructor
  | BigUint64ArrayConstructor;

/** The typed array a host view of elements `E` is. */
export type ElementArrayOf<E extends ElementType> = InstanceType<E>;

const ELEMENT_TYPES: readonly ElementType[] = [
  Uint8Array,
  Int8Array,
  Uint16Array,
  Int16Array,
  Uint32Array,
  Int32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
];

/** True when `value` is one of the supported typed-array constructors. */
export function isElementType(value: unknown): value is ElementType {
  return ELEMENT_TYPES.includes(value as ElementType);
}
