/**
 * Appends blind data to a grid being built: the 288-byte metadata records back to back, then each record's data,
 * 32-byte aligned, as NanoVDB lays them out (`dataOffset` counts from the record), and GridData's blind-metadata
 * offset and count. Spec: NANOVDB-FORMAT.md "Blind metadata".
 */
import { BLIND_METADATA_SIZE, BlindMeta, DATA_ALIGNMENT, GRID_NAME_SIZE, Grid } from '../grid/grid-layout.js';

/** One blind-data array to append. */
export interface BlindItem {
  /** `GridBlindDataSemantic` code. */
  readonly semantic: number;
  /** `GridBlindDataClass` code. */
  readonly dataClass: number;
  /** `GridType` code of one value. */
  readonly dataType: number;
  /** Bytes per value. */
  readonly valueSize: number;
  readonly valueCount: number;
  /** Record name, at most 255 UTF-8 bytes. */
  readonly name: string;
  /** Writes the `valueSize * valueCount` data bytes at `at`. */
  write(v: DataView, at: number): void;
}

const aligned = (n: number): number => Math.ceil(n / DATA_ALIGNMENT) * DATA_ALIGNMENT;

/** Bytes the records and data of `items` take. */
export function blindDataBytes(items: readonly BlindItem[]): number {
  return items.reduce((n, item) => n + BLIND_METADATA_SIZE + aligned(item.valueSize * item.valueCount), 0);
}

/** Writes `items` at byte `at` of the grid in `bytes` (zeroed there) and points GridData at them. */
export function writeBlindData(bytes: Uint8Array, at: number, items: readonly BlindItem[]): void {
  if (items.length === 0) return;
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let data = at + items.length * BLIND_METADATA_SIZE;
  items.forEach((item, i) => {
    writeBlindRecord(bytes, at + i * BLIND_METADATA_SIZE, data, item);
    data += aligned(item.valueSize * item.valueCount);
  });
  v.setBigInt64(Grid.blindMetadataOffset, BigInt(at), true);
  v.setUint32(Grid.blindMetadataCount, items.length, true);
}

/**
 * Writes the 288-byte metadata record of `item` at byte `record` of `bytes` (zeroed there) with its data at byte
 * `data` (`dataOffset` = `data - record`), and calls `item.write` for the data.
 */
export function writeBlindRecord(bytes: Uint8Array, record: number, data: number, item: BlindItem): void {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  v.setBigInt64(record + BlindMeta.dataOffset, BigInt(data - record), true);
  v.setBigUint64(record + BlindMeta.valueCount, BigInt(item.valueCount), true);
  v.setUint32(record + BlindMeta.valueSize, item.valueSize, true);
  v.setUint32(record + BlindMeta.semantic, item.semantic, true);
  v.setUint32(record + BlindMeta.dataClass, item.dataClass, true);
  v.setUint32(record + BlindMeta.dataType, item.dataType, true);
  bytes.set(new TextEncoder().encode(item.name).subarray(0, GRID_NAME_SIZE - 1), record + BlindMeta.name);
  item.write(v, data);
}
