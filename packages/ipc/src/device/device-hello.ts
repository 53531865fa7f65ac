import { ErrorCode, err, ok, type Result } from '@hs/streams';
import { readFrameHeader, writeFrameHeader } from '../wire/frame-header.js';
import { DEVICE_HANDLE_BYTES, FRAME_BYTES, FrameType, MAX_DESCRIPTOR_RANK, Offset, WireMemoryKind } from '../wire/frame-layout.js';
import { allZero, readSafeU64, writeSafeU64 } from '../wire/wire-integers.js';
import { MAX_TOPIC_SLOTS } from '../wire/control-frames.js';
import { fenceCounterBytes } from './fence-counters.js';

/**
 * The HELLO of a device boundary (memory kind 2): the geometry of the one exported allocation, the
 * device ordinal (bytes 48..51) and the 64-byte CUDA IPC memory handle (bytes 120..183). There is no
 * shared-memory segment, so the segment-name bytes are zero; `allocationBytes` (bytes 24..31) covers the
 * slots and the fence counters (one u64 per slot after the last slot, rounded up to 256 bytes).
 * Spec: "Crossing process boundaries: the generation fence".
 */
export interface DeviceHello {
  /** Random id of the topic; every later frame carries it. */
  readonly topicId: number;
  /** Slots in the exported allocation. */
  readonly slotCount: number;
  /** Bytes from one slot to the next (slot `i` starts at `i * slotStride`). */
  readonly slotStride: number;
  /** Bytes of the exported allocation: the slots, then the fence counters. */
  readonly allocationBytes: number;
  /** Largest rank a descriptor may carry. */
  readonly maxRank: number;
  /** Process id of the publisher. */
  readonly producerPid: number;
  /** CUDA ordinal of the exporting device, in the publisher's process. */
  readonly deviceOrdinal: number;
  /** The 64-byte CUDA IPC memory handle of the allocation (`cudaIpcMemHandle_t`). */
  readonly handle: Uint8Array;
}

/**
 * Writes a device HELLO frame at `offset` (the publisher's own values: trusted).
 *
 * @example
 * ```ts
 * import { FRAME_BYTES, decodeDeviceHello, encodeDeviceHello, fenceCounterBytes } from '@hs/ipc';
 * import { unwrap } from '@hs/streams';
 *
 * // a device topic's HELLO (DeviceTopicPublisher sends it): one exported allocation, the slots then their fence counters
 * const slotCount = 4;
 * const slotStride = 1 << 20;
 * const frame = new DataView(new ArrayBuffer(FRAME_BYTES));
 * encodeDeviceHello(frame, 0, {
 *   topicId: 0xd3e9,
 *   slotCount,
 *   slotStride,
 *   allocationBytes: slotCount * slotStride + fenceCounterBytes(slotCount),
 *   maxRank: 2,
 *   producerPid: process.pid,
 *   deviceOrdinal: 0,
 *   handle: new Uint8Array(64).fill(0xab), // the cudaIpcMemHandle_t of the allocation
 * });
 * const hello = unwrap(decodeDeviceHello(frame, 0));
 * console.log(`cuda:${hello.deviceOrdinal}, ${hello.slotCount} slots in ${hello.allocationBytes} bytes, handle ${hello.handle.length} bytes`);
 * ```
 */
export function encodeDeviceHello(view: DataView, offset: number, hello: DeviceHello): void {
  for (let i = offset; i < offset + FRAME_BYTES; i += 4) view.setUint32(i, 0, true);
  writeFrameHeader(view, offset, FrameType.Hello, hello.topicId);
  view.setUint32(offset + Offset.slotCount, hello.slotCount, true);
  writeSafeU64(view, offset + Offset.slotStride, hello.slotStride);
  writeSafeU64(view, offset + Offset.segmentBytes, hello.allocationBytes);
  view.setUint32(offset + Offset.memoryKind, WireMemoryKind.CudaDevice, true);
  view.setUint32(offset + Offset.maxRank, hello.maxRank, true);
  view.setUint32(offset + Offset.producerPid, hello.producerPid, true);
  view.setUint32(offset + Offset.deviceOrdinal, hello.deviceOrdinal, true);
  for (let i = 0; i < DEVICE_HANDLE_BYTES; i++) view.setUint8(offset + Offset.deviceHandle + i, hello.handle[i] ?? 0);
}

/**
 * Reads and validates a device HELLO: header, memory kind 2, slot count 1..65536, stride a positive
 * multiple of 256 whose slots and counters stay below 2^53 bytes (else `slot stride` overflows),
 * allocation bytes exactly slots plus fence counters, rank bound 0..8, a positive pid,
 * zero flags and segment-name bytes, zero tail. `ProtocolError` names the first bad field; a host HELLO
 * is `NotSupported` here (attach it with `ChannelRuntime`). Whether the exported allocation really holds
 * the announced bytes is checked when it is mapped (`CudaIpcImport.open`).
 *
 * @example
 * ```ts
 * import { FRAME_BYTES, WireMemoryKind, decodeDeviceHello, encodeDeviceHello, encodeHello, fenceCounterBytes } from '@hs/ipc';
 *
 * const frame = new DataView(new ArrayBuffer(FRAME_BYTES));
 * encodeDeviceHello(frame, 0, { topicId: 1, slotCount: 2, slotStride: 4096, allocationBytes: 2 * 4096 + fenceCounterBytes(2), maxRank: 3, producerPid: process.pid, deviceOrdinal: 1, handle: new Uint8Array(64) });
 * const device = decodeDeviceHello(frame, 0); // validates every field before anything is imported
 * if (device.ok) console.log(`device topic on cuda:${device.value.deviceOrdinal}, max rank ${device.value.maxRank}`);
 *
 * encodeHello(frame, 0, { topicId: 2, slotCount: 2, slotStride: 256, segmentBytes: 512, memoryKind: WireMemoryKind.Host, maxRank: 1, producerPid: process.pid, mailboxToken: null });
 * const host = decodeDeviceHello(frame, 0); // a host topic's HELLO
 * if (!host.ok) console.log(host.error.message); // NotSupported: ... attach to it with ChannelRuntime
 * ```
 */
export function decodeDeviceHello(view: DataView, offset: number): Result<DeviceHello> {
  const header = readFrameHeader(view, offset, null);
  if (typeof header !== 'number') return header;
  const bad = (field: string, problem: string): Result<never> => err(ErrorCode.ProtocolError, `device hello rejected: ${field} ${problem}`);
  if (header !== FrameType.Hello) return bad('frame type', `is ${FrameType[header]}, expected Hello`);
  if (view.getUint32(offset + Offset.memoryKind, true) !== WireMemoryKind.CudaDevice) {
    return err(ErrorCode.NotSupported, 'hello: the topic carries host or pinnedHost memory; attach to it with ChannelRuntime');
  }
  const slotCount = view.getUint32(offset + Offset.slotCount, true);
  if (slotCount < 1 || slotCount > MAX_TOPIC_SLOTS) return bad('slot count', `${slotCount} is outside 1..${MAX_TOPIC_SLOTS}`);
  const slotStride = readSafeU64(view, offset + Offset.slotStride);
  if (slotStride <= 0 || slotStride % 256 !== 0) return bad('slot stride', `${slotStride} is not a positive multiple of 256 bytes`);
  // Computed exactly, or refused: a product past 2^53 would compare as a rounded double.
  if (slotCount * slotStride + fenceCounterBytes(slotCount) > Number.MAX_SAFE_INTEGER) {
    return bad('slot stride', `${slotStride} x ${slotCount} slots overflows a 53-bit byte count`);
  }
  const allocationBytes = readSafeU64(view, offset + Offset.segmentBytes);
  if (allocationBytes !== slotCount * slotStride + fenceCounterBytes(slotCount)) {
    return bad('allocation bytes', `${allocationBytes} are not ${slotCount} slots of ${slotStride} bytes plus their fence counters`);
  }
  const maxRank = view.getUint32(offset + Offset.maxRank, true);
  if (maxRank > MAX_DESCRIPTOR_RANK) return bad('max rank', `${maxRank} exceeds ${MAX_DESCRIPTOR_RANK}`);
  const producerPid = view.getUint32(offset + Offset.producerPid, true);
  if (producerPid === 0 || producerPid > 0x7fffffff) return bad('producer pid', `${producerPid} is not a process id`);
  if (!allZero(view, offset + Offset.helloFlags, offset + Offset.deviceOrdinal)) return bad('flags', 'are not zero');
  const deviceOrdinal = view.getUint32(offset + Offset.deviceOrdinal, true);
  if (deviceOrdinal > 1023) return bad('device ordinal', `${deviceOrdinal} is not a device`);
  if (!allZero(view, offset + Offset.helloReserved, offset + Offset.deviceHandle)) return bad('reserved and segment-name bytes 52..119', 'are not zero');
  if (!allZero(view, offset + Offset.helloTail, offset + FRAME_BYTES)) return bad('tail bytes 184..255', 'are not zero');
  const handle = new Uint8Array(DEVICE_HANDLE_BYTES);
  for (let i = 0; i < DEVICE_HANDLE_BYTES; i++) handle[i] = view.getUint8(offset + Offset.deviceHandle + i);
  const topicId = view.getUint32(offset + Offset.topicId, true);
  return ok({ topicId, slotCount, slotStride, allocationBytes, maxRank, producerPid, deviceOrdinal, handle });
}
