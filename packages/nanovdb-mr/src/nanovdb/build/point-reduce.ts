/**
 * The one reduction of point attributes into voxel values (issue 24 item 1), shared by the host builder
 * (`pointAttributesToGrid`) and the stream-ordered builds: `reduceSegment` reduces one voxel's points in sorted
 * order, `toValueType` rounds the result to the grid's value type, and `reduceLaunch` is the
 * `hs.nanovdb.pointsToGrid.reduce` launch (`native/src/nanovdb/points-to-grid-reduce.cu`, compiled with
 * `-fmad=false`) whose host implementation, `reduceOnHost`, runs these two functions over the sort stage's
 * workspace, so host and device write the same values-region bytes.
 */
import type { KernelLaunch, MemoryRange } from '@hs/streams';
import { GridType } from '../grid/grid-layout.js';
import { setFloat32Canonical, setFloat64Canonical } from '../grid/scalar-io.js';
import { ReportWord, hostRegions } from './points-to-grid-workspace.js';
import { sameVoxel } from './voxel-order.js';

/** How the points of one voxel become its value. */
export type PointReduction = 'mean' | 'sum' | 'min' | 'max' | 'count' | 'last';

/** The reductions, in the order of their kernel parameter (0 mean ... 5 last). */
export const REDUCTIONS: readonly PointReduction[] = ['mean', 'sum', 'min', 'max', 'count', 'last'];

/** Numeric arrays an attribute may come in. */
export type PointAttributeArray = Float32Array | Float64Array | Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array;

/** A constructor of `PointAttributeArray`: the element type of an attribute span. */
export type PointAttributeElement =
  | Float32ArrayConstructor
  | Float64ArrayConstructor
  | Int8ArrayConstructor
  | Uint8ArrayConstructor
  | Int16ArrayConstructor
  | Uint16ArrayConstructor
  | Int32ArrayConstructor
  | Uint32ArrayConstructor;

/** The constructors of `PointAttributeArray`, in the order of the reduce kernel's attribute-type parameter (0 f32 ... 7 u32). */
export const ATTRIBUTE_ARRAYS: readonly PointAttributeElement[] = [Float32Array, Float64Array, Int8Array, Uint8Array, Int16Array, Uint16Array, Int32Array, Uint32Array];

/** The value types a reduction is rounded to. */
export type ReducedValueType = GridType.Float | GridType.Double | GridType.Int32 | GridType.Vec3f | GridType.RGBA8;

/** Components per voxel of each reduced value type. */
export const REDUCED_COMPONENTS: Readonly<Record<ReducedValueType, number>> = {
  [GridType.Float]: 1,
  [GridType.Double]: 1,
  [GridType.Int32]: 1,
  [GridType.Vec3f]: 3,
  [GridType.RGBA8]: 4,
};

/**
 * The value of a reduced segment in the grid's value type: Float and Vec3f round the float64 result to the nearest
 * f32 (ties to even); Double keeps it; Int32 rounds to the nearest integer, ties away from zero, clamped to
 * [-2^31, 2^31 - 1]; RGBA8 the same, clamped to [0, 255] (NaN stays NaN: an integer store makes it 0).
 */
export function toValueType(valueType: ReducedValueType, v: number): number {
  if (valueType === GridType.Int32 || valueType === GridType.RGBA8) {
    const r = Math.sign(v) * Math.round(Math.abs(v));
    return valueType === GridType.Int32 ? Math.min(2147483647, Math.max(-2147483648, r)) : Math.min(255, Math.max(0, r));
  }
  return valueType === GridType.Double ? v : Math.fround(v);
}

/**
 * One channel of the sorted points `start..end` (exclusive) of a voxel reduced; `at(j)` is that channel of sorted
 * point `j`, and the sorted order is the input order within a voxel. `sum` and `mean` add in float64 in that order
 * (the mean divides the sum by the count), `min`, `max` and `last` return one of the values exactly, `count` the
 * number of points. A NaN is kept by `sum` and `mean`, by `min` and `max` only when it is the first value (a later
 * NaN compares false), and stored as the canonical quiet NaN (`CANONICAL_F32_NAN`).
 */
export function reduceSegment(at: (j: number) => number, start: number, end: number, reduction: PointReduction): number {
  if (reduction === 'count') return end - start;
  if (reduction === 'last') return at(end - 1);
  let acc = at(start);
  for (let j = start + 1; j < end; j++) {
    const v = at(j);
    if (reduction === 'min') acc = v < acc ? v : acc;
    else if (reduction === 'max') acc = v > acc ? v : acc;
    else acc += v;
  }
  return reduction === 'mean' ? acc / (end - start) : acc;
}

/** What the reduce launch reads: the attribute layout and the reduction. */
export interface ReduceParams {
  /** Points read by the sort stage (its `used`). */
  readonly used: number;
  /** The attribute's element type. */
  readonly element: PointAttributeElement;
  /** Attribute elements per point, 1-4. */
  readonly channels: number;
  readonly reduction: PointReduction;
  /** The value type written. */
  readonly valueType: ReducedValueType;
}

/** Scalar parameters of the reduce kernel. */
export function reduceArgs(p: ReduceParams): number[] {
  return [p.used, ATTRIBUTE_ARRAYS.indexOf(p.element), p.channels, REDUCTIONS.indexOf(p.reduction), p.valueType];
}

/**
 * The reduce launch: reads the attributes (`channels` elements per input point) and the sort stage's workspace
 * (the sorted voxels and each sorted point's input index), writes voxel k's value at `k * valueSize` of `values`
 * for every voxel whose value fits the range.
 */
export function reduceLaunch(attributes: MemoryRange, workspace: MemoryRange, values: MemoryRange, p: ReduceParams): KernelLaunch {
  return { name: 'hs.nanovdb.pointsToGrid.reduce', reads: [attributes, workspace], writes: [values], params: reduceArgs(p), host: reduceOnHost };
}

const VALUE_BYTES: Readonly<Record<ReducedValueType, number>> = {
  [GridType.Float]: 4,
  [GridType.Double]: 8,
  [GridType.Int32]: 4,
  [GridType.Vec3f]: 12,
  [GridType.RGBA8]: 4,
};

/** Host implementation of `hs.nanovdb.pointsToGrid.reduce` (see `reduceLaunch`). */
export function reduceOnHost(reads: readonly Uint8Array[], writes: readonly Uint8Array[], params: readonly number[]): void {
  const [used, type, channels, reductionCode, valueType] = params as [number, number, number, number, ReducedValueType];
  const Element = ATTRIBUTE_ARRAYS[type] as PointAttributeElement;
  const reduction = REDUCTIONS[reductionCode] as PointReduction;
  const raw = reads[0] as Uint8Array;
  const ws = reads[1] as Uint8Array;
  const out = writes[0] as Uint8Array;
  const length = channels * used;
  const bytes = raw.subarray(0, length * Element.BYTES_PER_ELEMENT);
  const attributes = bytes.byteOffset % Element.BYTES_PER_ELEMENT === 0 ? new Element(bytes.buffer as ArrayBuffer, bytes.byteOffset, length) : new Element(bytes.slice().buffer);
  const valid = new DataView(ws.buffer, ws.byteOffset).getUint32(4 * ReportWord.valid, true);
  const r = hostRegions(used);
  const sorted = new Int32Array(ws.buffer, ws.byteOffset + r.keys, 3 * valid);
  const order = new Uint32Array(ws.buffer, ws.byteOffset + r.order, valid);
  const components = reduction === 'count' ? REDUCED_COMPONENTS[valueType] : channels;
  const size = VALUE_BYTES[valueType];
  const capacity = Math.floor(out.byteLength / size);
  const v = new DataView(out.buffer, out.byteOffset, out.byteLength);
  for (let start = 0, k = 0; start < valid && k < capacity; k++) {
    let end = start + 1;
    while (end < valid && sameVoxel(sorted, start, end)) end++;
    for (let c = 0; c < components; c++) {
      const value = toValueType(valueType, reduceSegment((j) => attributes[channels * (order[j] as number) + c] as number, start, end, reduction));
      if (valueType === GridType.Double) setFloat64Canonical(v, 8 * k, value);
      else if (valueType === GridType.Int32) v.setInt32(4 * k, value, true);
      else if (valueType === GridType.RGBA8) v.setUint8(4 * k + c, value);
      else setFloat32Canonical(v, size * k + 4 * c, value);
    }
    start = end;
  }
}
