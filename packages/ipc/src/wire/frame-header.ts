import { ErrorCode, err, type Err } from '@hs/streams';
import { FRAME_MAGIC, FrameType, Offset, WIRE_VERSION } from './frame-layout.js';

/** Writes the common 12-byte header of a frame at `offset`. */
export function writeFrameHeader(view: DataView, offset: number, type: FrameType, topicId: number): void {
  view.setUint32(offset + Offset.magic, FRAME_MAGIC, true);
  view.setUint16(offset + Offset.version, WIRE_VERSION, true);
  view.setUint16(offset + Offset.type, type, true);
  view.setUint32(offset + Offset.topicId, topicId, true);
}

/**
 * Checks the header of a received frame: magic, version, a known type, and (unless `topicId` is null, as
 * for the HELLO that announces it) the topic id. Returns the frame type, or `ProtocolError` naming the
 * first bad field (a non-number, so `typeof result === 'number'` tells them apart without allocating).
 */
export function readFrameHeader(view: DataView, offset: number, topicId: number | null): FrameType | Err {
  const magic = view.getUint32(offset + Offset.magic, true);
  if (magic !== FRAME_MAGIC) {
    return err(ErrorCode.ProtocolError, `frame magic is 0x${magic.toString(16)}, expected 0x${FRAME_MAGIC.toString(16)} ("HSIP"); the peer does not speak the hs IPC protocol`);
  }
  const version = view.getUint16(offset + Offset.version, true);
  if (version !== WIRE_VERSION) {
    const peer = version === 1 ? ' (named /dev/shm segments; version 2 passes sealed segments as descriptors, consume.py needs Python >= 3.9)' : '';
    return err(ErrorCode.ProtocolError, `the peer speaks wire version ${version}${peer}, this side speaks wire version ${WIRE_VERSION}; use matching @hs/ipc versions (and consume.py) on both sides`);
  }
  const type = view.getUint16(offset + Offset.type, true);
  if (type < FrameType.Hello || type > FrameType.Attach) return err(ErrorCode.ProtocolError, `frame type ${type} is unknown`);
  if (topicId !== null) {
    const got = view.getUint32(offset + Offset.topicId, true);
    if (got !== topicId) return err(ErrorCode.ProtocolError, `frame names topic id ${got}, but this connection carries topic id ${topicId}`);
  }
  return type as FrameType;
}
