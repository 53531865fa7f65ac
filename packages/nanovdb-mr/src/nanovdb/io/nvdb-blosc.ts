/**
 * BLOSC `.nvdb` payloads through a WebAssembly build of c-blosc (the `numcodecs` package, imported the first time a
 * BLOSC file is read or written, so it costs nothing otherwise). NanoVDB stores a BLOSC grid as chunks of at most
 * 1 GiB of the grid, each a u64 compressed size and one BLOSC frame. Reading re-writes BLOSC segments as uncompressed
 * ones and hands them to the synchronous decoder; writing compresses each payload of an uncompressed encoding.
 * Spec: NANOVDB-FORMAT.md ".nvdb files" (codec 2); issue 23 item 3 (BLOSC by a JS/WASM codec, loaded on demand).
 */
import { ErrorCode, HsError } from '@hs/streams';
import { CODECS, HEADER_SIZE, META_SIZE, readSegmentHeaders } from './nvdb-segment.js';

/** Bytes of the grid per BLOSC chunk (NanoVDB's limit). */
export const CHUNK = 2 ** 30;

interface Codec {
  encode(data: Uint8Array): Uint8Array | Promise<Uint8Array>;
  decode(data: Uint8Array): Uint8Array | Promise<Uint8Array>;
}
let codec: Promise<Codec> | undefined;

/** The InvalidArgument for `field` of segment `index` at byte `start`. */
function fault(index: number, start: number, field: string, problem: string): HsError {
  return new HsError(ErrorCode.InvalidArgument, `.nvdb segment ${index} at byte ${start}: ${field}: ${problem}`);
}

/** The codec, imported once; rejects with NotSupported naming the package when it cannot be loaded. */
function blosc(): Promise<Codec> {
  codec ??= import('numcodecs/blosc').then(
    // NanoVDB's settings: level 9, byte shuffle, LZ4, 256 KiB blocks
    (m) => m.default.fromConfig({ id: 'blosc', clevel: 9, cname: 'lz4', shuffle: 1, blocksize: 1 << 18 }),
    (cause: unknown) => {
      codec = undefined;
      throw new HsError(ErrorCode.NotSupported, 'BLOSC .nvdb files need the optional numcodecs package (a WebAssembly c-blosc): npm install numcodecs beside @hs/nanovdb-mr', { cause });
    },
  );
  return codec;
}

/** One decoded BLOSC frame of a `.nvdb` payload (rejects with InvalidArgument naming `where` when it does not decode). */
export async function decodeBloscFrame(frame: Uint8Array, where: string): Promise<Uint8Array> {
  const c = await blosc();
  try {
    return await c.decode(frame);
  } catch (cause) {
    throw new HsError(ErrorCode.InvalidArgument, `${where}: a BLOSC chunk does not decode`, { cause });
  }
}

/** Appends `parts` into one array. */
function join(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * `file` with every BLOSC segment rewritten uncompressed (other segments, and raw grid buffers, as they are).
 * @throws HsError InvalidArgument naming the segment and field of a bad header or BLOSC chunk; NotSupported without numcodecs.
 */
export async function inflateBloscSegments(file: Uint8Array): Promise<Uint8Array> {
  if (file.length < HEADER_SIZE || !readSegmentHeaders(file, 0, 0).ok) return file; // raw buffers, or let decodeNvdb name the fault
  const parts: Uint8Array[] = [];
  for (let start = 0, index = 0; start < file.length; index++) {
    const headers = readSegmentHeaders(file, start, index);
    if (!headers.ok) throw headers.error;
    const { grids, payloads, end } = headers.value;
    if (headers.value.codec !== 'blosc') {
      parts.push(file.subarray(start, end));
      start = end;
      continue;
    }
    const head = file.slice(start, payloads[0] as number);
    const v = new DataView(head.buffer);
    v.setUint16(14, CODECS.indexOf('none'), true);
    const inflated: Uint8Array[] = [];
    let meta = HEADER_SIZE;
    for (const [g, m] of grids.entries()) {
      v.setBigUint64(meta + 8, BigInt(m.gridSize), true); // fileSize
      v.setUint16(meta + 168, CODECS.indexOf('none'), true);
      meta += META_SIZE + v.getUint32(meta + 136, true);
      const chunks: Uint8Array[] = [];
      let at = payloads[g] as number;
      const payloadEnd = at + m.fileSize;
      for (let left = m.gridSize; left > 0; left -= CHUNK) {
        if (payloadEnd - at < 8) throw fault(index, start, `payload[${g}]`, 'a BLOSC chunk size is missing (truncated)');
        const size = Number(new DataView(file.buffer, file.byteOffset + at, 8).getBigUint64(0, true));
        if (size > payloadEnd - at - 8) throw fault(index, start, `payload[${g}].chunkSize`, `${size} bytes run past the payload`);
        const chunk = await decodeBloscFrame(file.subarray(at + 8, at + 8 + size), `.nvdb segment ${index}: payload[${g}]`);
        if (chunk.length !== Math.min(left, CHUNK)) throw fault(index, start, `payload[${g}]`, `a BLOSC chunk decodes to ${chunk.length} bytes, not ${Math.min(left, CHUNK)}`);
        chunks.push(chunk);
        at += 8 + size;
      }
      inflated.push(join(chunks));
    }
    parts.push(head, ...inflated);
    start = end;
  }
  return join(parts);
}

/** An uncompressed `.nvdb` encoding (`encodeNvdb(..., 'none')`) with every payload BLOSC-compressed in 1 GiB chunks. */
export async function deflateToBlosc(file: Uint8Array): Promise<Uint8Array> {
  const codecOf = await blosc();
  const parts: Uint8Array[] = [];
  for (let start = 0, index = 0; start < file.length; index++) {
    const headers = readSegmentHeaders(file, start, index);
    if (!headers.ok) throw headers.error;
    const { grids, payloads, end } = headers.value;
    const head = file.slice(start, payloads[0] as number);
    const v = new DataView(head.buffer);
    v.setUint16(14, CODECS.indexOf('blosc'), true);
    const packed: Uint8Array[] = [];
    let meta = HEADER_SIZE;
    for (const [g, m] of grids.entries()) {
      const raw = file.subarray(payloads[g] as number, (payloads[g] as number) + m.gridSize);
      const frames: Uint8Array[] = [];
      for (let at = 0; at < raw.length; at += CHUNK) {
        const frame = await codecOf.encode(raw.subarray(at, Math.min(raw.length, at + CHUNK)));
        const size = new Uint8Array(8);
        new DataView(size.buffer).setBigUint64(0, BigInt(frame.length), true);
        frames.push(size, frame);
      }
      const payload = join(frames);
      v.setBigUint64(meta + 8, BigInt(payload.length), true); // fileSize
      v.setUint16(meta + 168, CODECS.indexOf('blosc'), true);
      meta += META_SIZE + v.getUint32(meta + 136, true);
      packed.push(payload);
    }
    parts.push(head, ...packed);
    start = end;
  }
  return join(parts);
}
