import { ErrorCode, HsError, err, ok, type Err, type MemoryRange, type Result } from '@hs/streams';
import type { ElementSpan } from '../../element-span.js';
import { PointEncoding } from './points-to-grid-kernels.js';

/** Index-space points in backend memory: `Int32Array` elements, x, y, z triplets of voxel coordinates. */
export interface IndexPointSpan {
  /** Discriminant: coordinates are voxel indices (i, j, k triplets). */
  readonly space: 'index';
  /** A `ResourceBuffer` or `BufferView` of `Int32Array` elements. */
  readonly coords: ElementSpan<Int32ArrayConstructor>;
}

/** World-space points in backend memory: `Float32Array` or `Float64Array` elements, x, y, z triplets. */
export interface WorldPointSpan {
  /** Discriminant: positions are in world units. */
  readonly space: 'world';
  /** A `ResourceBuffer` or `BufferView` of `Float32Array` or `Float64Array` elements. */
  readonly positions: ElementSpan<Float32ArrayConstructor> | ElementSpan<Float64ArrayConstructor>;
}

/**
 * Most points one stream-ordered build accepts: counts and sorted indices are 32-bit on the device.
 * @example
 * ```ts
 * import { MAX_DEVICE_POINTS, MAX_POINTS } from '@hs/nanovdb-mr';
 *
 * const cloud = 5e9; // points in a large aerial survey
 * const builds = Math.ceil(cloud / MAX_DEVICE_POINTS);
 * console.log(`a stream-ordered build takes ${MAX_DEVICE_POINTS} points (the host one ${MAX_POINTS}): split ${cloud} points into ${builds} builds`);
 * ```
 */
export const MAX_DEVICE_POINTS = 2 ** 32 - 1;

/** What the kernels need to know about a point span. */
export interface PointSource {
  /** The coordinates' bytes (`null` for no points). */
  readonly range: MemoryRange | null;
  /** Points the span holds. */
  readonly count: number;
  readonly encoding: PointEncoding;
}

/**
 * Checks a point span: InvalidArgument for a length that is not a whole number of triplets or more
 * than `MAX_DEVICE_POINTS` points.
 * @throws HsError InvalidArgument when `points` is not an index or world span of the right element type.
 */
export function pointSource(who: string, points: IndexPointSpan | WorldPointSpan): Result<PointSource> {
  const span = points?.space === 'index' ? points.coords : points?.space === 'world' ? points.positions : undefined;
  const element = span?.element as unknown;
  const expected = points?.space === 'index' ? element === Int32Array : element === Float32Array || element === Float64Array;
  if (span === undefined || typeof span !== 'object' || !expected || typeof span.size !== 'number') {
    throw new HsError(
      ErrorCode.InvalidArgument,
      `${who}: points must be { space: 'index', coords: span of Int32Array } or { space: 'world', positions: span of Float32Array | Float64Array } (a ResourceBuffer or BufferView)`,
    );
  }
  if (span.size % 3 !== 0) return err(ErrorCode.InvalidArgument, `${who}: ${span.size} coordinates is not a whole number of x, y, z triplets`);
  const count = span.size / 3;
  if (count > MAX_DEVICE_POINTS) return err(ErrorCode.InvalidArgument, `${who}: ${count} points exceed the limit of 2^32 - 1 per stream-ordered build; split the cloud`);
  const encoding = element === Int32Array ? PointEncoding.IndexInt32 : element === Float32Array ? PointEncoding.WorldFloat32 : PointEncoding.WorldFloat64;
  return ok({ range: span.data, count, encoding });
}

/** InvalidArgument unless the points start at a multiple of their element size. */
export function pointAlignmentProblem(who: string, source: PointSource): Err | null {
  if (source.range === null) return null;
  const size = source.encoding === PointEncoding.WorldFloat64 ? 8n : 4n;
  const address = source.range.memory.address + BigInt(source.range.byteOffset);
  return address % size === 0n ? null : err(ErrorCode.InvalidArgument, `${who}: the points start at address ${address}, not a multiple of their ${size}-byte element size`);
}
