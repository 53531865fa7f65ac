import { ErrorCode, HsError } from '@hs/streams';
import type { GridMetadata } from './grid-validation.js';

/**
 * Throws the InvalidArgument of `who`, a reader over bytes and one grid of them, unless `bytes` is a Uint8Array that
 * holds the grid `metadata` describes (its `byteOffset + gridSize` bytes); `call` shows the call to make instead.
 * Readers walk the grid through a DataView of exactly those bytes, so shorter bytes would end in a RangeError.
 * @internal
 */
export function requireGridInBytes(who: string, bytes: unknown, metadata: unknown, call: string): void {
  const m = metadata as Partial<GridMetadata> | null | undefined;
  if (!(bytes instanceof Uint8Array) || typeof m !== 'object' || m === null || !Number.isSafeInteger(m.gridSize) || !Number.isSafeInteger(m.byteOffset)) {
    throw new HsError(ErrorCode.InvalidArgument, `${who} takes the bytes and one grid of them: ${call}, unwrapping hostBytes()`);
  }
  const { gridSize, byteOffset } = m as GridMetadata;
  if (bytes.length < byteOffset + gridSize) {
    throw new HsError(
      ErrorCode.InvalidArgument,
      `${who}: the bytes hold ${bytes.length} bytes, fewer than the ${gridSize} of grid ${String(m.gridIndex)} at byte ${byteOffset}; pass the bytes its metadata was validated from`,
    );
  }
}
