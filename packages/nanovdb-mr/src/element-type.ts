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

/**
 * True when `value` is one of the supported typed-array constructors.
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { HostResource, ResourceBuffer, isElementType } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * // validate an element type read from configuration before allocating with it
 * const requested: unknown = { f32: Float32Array, u8: Uint8Array, array: Array }['f32'];
 * if (!isElementType(requested)) throw new Error('unsupported element type');
 * const buffer = unwrap(ResourceBuffer.allocate(backend, new HostResource(backend), 16, { element: requested }));
 * console.log(`${buffer.size} elements of ${requested.BYTES_PER_ELEMENT} bytes; Array allowed: ${isElementType(Array)}`);
 * buffer.dispose();
 * ```
 */
export function isElementType(value: unknown): value is ElementType {
  return ELEMENT_TYPES.includes(value as ElementType);
}
