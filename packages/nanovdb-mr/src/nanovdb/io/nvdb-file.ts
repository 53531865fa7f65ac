/**
 * `.nvdb` files read from and written to paths a chunk at a time: the reader holds the headers, one chunk of the file
 * (default 16 MiB) and the decoded grids, never the whole file; zip payloads are inflated as a stream, BLOSC ones
 * frame by frame. The writer writes one handle's segment after another.
 * Spec: NANOVDB-FORMAT.md ".nvdb files" (io::readGrids / io::writeGrids on file names); issue 23 item 3.
 */
import { once } from 'node:events';
import type { FileHandle } from 'node:fs/promises';
import { createInflate } from 'node:zlib';
import { ErrorCode, type FileSystemAction, HsError, OK_VOID, checkOptionFields, createStagingFile, fileSystemError, openRegularFile, unwrap, type Backend } from '@hs/streams';
import { ResourceBuffer } from '../../resource-buffer.js';
import type { SyncResource } from '../../resource.js';
import { GridHandle } from '../grid/grid-handle.js';
import { GRID_MAGIC, Grid, LEGACY_GRID_MAGIC } from '../grid/grid-layout.js';
import { writeNvdbAsync } from './nvdb-async.js';
import { handlesProblem } from './nvdb-io.js';
import { CHUNK as BLOSC_CHUNK, decodeBloscFrame } from './nvdb-blosc.js';
import { HEADER_SIZE, MAX_GRID_SIZE, META_SIZE, checkWriterCodec, metadataMismatch, readSegmentHeaders, tooLargeForHost, type NvdbCodec, type SegmentHeaders } from './nvdb-segment.js';

/** Options of `readNvdbFile`. */
export interface ReadNvdbFileOptions {
  /** Bytes read from the file at a time; default 16 MiB. */
  readonly chunkBytes?: number;
}


/** Runs one file-system call on `path`, turning what Node throws into the HsError `fileSystemError` names (ENOENT: NotFound, ...). */
async function fileCall<T>(action: FileSystemAction, path: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (thrown) {
    throw thrown instanceof HsError ? thrown : fileSystemError(action, path, thrown).error;
  }
}

/** Reads exactly `length` bytes at `position` into `into`. @throws HsError InvalidArgument naming `what` when the file ends first. */
async function readExactly(fh: FileHandle, into: Uint8Array, position: number, what: string): Promise<void> {
  let done = 0;
  while (done < into.length) {
    const { bytesRead } = await fh.read(into, done, into.length - done, position + done);
    if (bytesRead === 0) throw new HsError(ErrorCode.InvalidArgument, `${what}: the file ends ${into.length - done} bytes early (truncated)`);
    done += bytesRead;
  }
}

/** The headers of the segment at `start`: read piece by piece (header, then each record and name), then checked. */
async function segmentHeaders(fh: FileHandle, start: number, index: number, size: number): Promise<SegmentHeaders> {
  const where = `.nvdb segment ${index} at byte ${start}`;
  const parts: Uint8Array[] = [new Uint8Array(Math.min(HEADER_SIZE, size - start))];
  await readExactly(fh, parts[0] as Uint8Array, start, where);
  let at = start + HEADER_SIZE;
  const count = parts[0]!.length === HEADER_SIZE ? new DataView(parts[0]!.buffer).getUint16(12, true) : 0;
  for (let g = 0; g < count && at + META_SIZE <= size; g++) {
    const meta = new Uint8Array(META_SIZE);
    await readExactly(fh, meta, at, where);
    const name = new Uint8Array(Math.min(new DataView(meta.buffer).getUint32(136, true), size - at - META_SIZE));
    await readExactly(fh, name, at + META_SIZE, where);
    parts.push(meta, name);
    at += META_SIZE + name.length;
  }
  const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((o, p) => (bytes.set(p, o), o + p.length), 0);
  return unwrap(readSegmentHeaders(bytes, 0, index, size - start));
}

/** Inflates the zlib stream of `length` bytes at `position` into `out`, which it must fill exactly. */
async function inflateInto(fh: FileHandle, position: number, length: number, out: Uint8Array, chunk: number, where: string): Promise<void> {
  const inflate = createInflate();
  let written = 0;
  let overflow = false;
  inflate.on('data', (d: Buffer) => {
    if (written + d.length > out.length) overflow = true;
    else out.set(d, written);
    written += d.length;
  });
  const ended = new Promise<void>((resolve, reject) => {
    inflate.on('end', resolve);
    inflate.on('error', (cause) => reject(new HsError(ErrorCode.InvalidArgument, `${where}: the zlib stream is corrupt`, { cause })));
  });
  for (let done = 0; done < length; ) {
    const piece = new Uint8Array(Math.min(chunk, length - done));
    await readExactly(fh, piece, position + done, where);
    if (!inflate.write(piece)) await Promise.race([once(inflate, 'drain'), ended]);
    done += piece.length;
  }
  inflate.end();
  await ended;
  if (overflow || written !== out.length) throw new HsError(ErrorCode.InvalidArgument, `${where}: inflates to ${written} bytes, not gridSize ${out.length}`);
}

/** Decodes grid `g` of a segment from the file into `out` (its gridSize bytes). */
async function decodeInto(fh: FileHandle, headers: SegmentHeaders, g: number, start: number, out: Uint8Array, chunk: number, index: number): Promise<void> {
  const m = headers.grids[g]!;
  const where = `.nvdb segment ${index}: payload[${g}]`;
  const at = start + headers.payloads[g]!;
  if (headers.codec === 'none') {
    if (m.fileSize !== m.gridSize) throw new HsError(ErrorCode.InvalidArgument, `.nvdb segment ${index}: meta[${g}].fileSize: ${m.fileSize} differs from gridSize ${m.gridSize} for an uncompressed grid`);
    for (let done = 0; done < m.gridSize; done += chunk) await readExactly(fh, out.subarray(done, Math.min(m.gridSize, done + chunk)), at + done, where);
    return;
  }
  const size = new Uint8Array(8);
  if (headers.codec === 'zip') {
    await readExactly(fh, size, at, where);
    const packed = Number(new DataView(size.buffer).getBigUint64(0, true));
    if (packed !== m.fileSize - 8) throw new HsError(ErrorCode.InvalidArgument, `${where}.compressedSize: ${packed} differs from the ${m.fileSize - 8} bytes that follow`);
    return inflateInto(fh, at + 8, packed, out, chunk, where);
  }
  let pos = at;
  for (let done = 0; done < m.gridSize; done += BLOSC_CHUNK) {
    await readExactly(fh, size, pos, where);
    const frameSize = Number(new DataView(size.buffer).getBigUint64(0, true));
    if (pos + 8 + frameSize > at + m.fileSize) throw new HsError(ErrorCode.InvalidArgument, `${where}.chunkSize: ${frameSize} bytes run past the payload`);
    const frame = new Uint8Array(frameSize);
    await readExactly(fh, frame, pos + 8, where);
    const decoded = await decodeBloscFrame(frame, where);
    const expected = Math.min(BLOSC_CHUNK, m.gridSize - done);
    if (decoded.length !== expected) throw new HsError(ErrorCode.InvalidArgument, `${where}: a BLOSC chunk decodes to ${decoded.length} bytes, not ${expected}`);
    out.set(decoded, done);
    pos += 8 + frameSize;
  }
}

/**
 * Checks, before anything is allocated for them, that each BLOSC grid of a segment holds the chunks its gridSize
 * needs: one per GiB, each a frame inside the payload whose BLOSC header declares the chunk's size. A file whose
 * FileMetaData claims more than its frames hold is refused here, not after allocating the claimed gridSize.
 */
async function checkBloscChunks(fh: FileHandle, headers: SegmentHeaders, start: number, index: number): Promise<void> {
  const word = new Uint8Array(16);
  const v = new DataView(word.buffer);
  for (const [g, m] of headers.grids.entries()) {
    const where = `.nvdb segment ${index}: payload[${g}]`;
    const at = start + headers.payloads[g]!;
    let pos = at;
    for (let done = 0; done < m.gridSize; done += BLOSC_CHUNK) {
      if (pos + 8 + 16 > at + m.fileSize) throw new HsError(ErrorCode.InvalidArgument, `${where}: the payload (meta[${g}].fileSize ${m.fileSize}) ends before the BLOSC chunk of grid bytes ${done}.. that gridSize ${m.gridSize} needs`);
      await readExactly(fh, word.subarray(0, 8), pos, where);
      const frameSize = Number(v.getBigUint64(0, true));
      if (frameSize < 16 || pos + 8 + frameSize > at + m.fileSize) throw new HsError(ErrorCode.InvalidArgument, `${where}.chunkSize: ${frameSize} bytes run past the payload`);
      await readExactly(fh, word, pos + 8, where);
      // BLOSC header: version, versionlz, flags, typesize, then u32 nbytes (the chunk's decoded size), blocksize, cbytes
      const nbytes = v.getUint32(4, true);
      const expected = Math.min(BLOSC_CHUNK, m.gridSize - done);
      if (nbytes !== expected) throw new HsError(ErrorCode.InvalidArgument, `${where}: a BLOSC chunk holds ${nbytes} bytes, not the ${expected} that meta[${g}].gridSize ${m.gridSize} needs there`);
      pos += 8 + frameSize;
    }
  }
}

/** A host-accessible buffer of `size` bytes from `resource` and its host view. */
function hostBuffer(backend: Backend, resource: SyncResource, size: number): { buffer: ResourceBuffer<SyncResource, Uint8ArrayConstructor>; view: Uint8Array } {
  const buffer = unwrap(ResourceBuffer.allocate(backend, resource, size, { alignment: 32 }));
  const view = buffer.hostView();
  if (!view.ok) {
    buffer.dispose();
    throw new HsError(ErrorCode.NotSupported, 'readNvdbFile: the resource gives memory the host cannot write; read into host, pinned or managed memory, then copyTo', { cause: view.error });
  }
  return { buffer, view: view.value };
}

/** Validates `buffer` as a grid chain and wraps it, freeing it on failure. */
function adopt(backend: Backend, buffer: ResourceBuffer<SyncResource, Uint8ArrayConstructor>, context: string): GridHandle<ResourceBuffer<SyncResource, Uint8ArrayConstructor>> {
  const handle = GridHandle.fromHostBytes(backend, buffer);
  if (handle.ok) return handle.value;
  buffer.dispose();
  throw new HsError(handle.error.code, `${context}: ${handle.error.message}`, { cause: handle.error });
}

/**
 * Reads the `.nvdb` file at `path` into one `GridHandle` per segment (or one for a file of raw grid buffers), each in
 * a buffer from `resource` (host-accessible), reading `chunkBytes` of the file at a time: the file is never held
 * whole, only its headers, one chunk and the decoded grids. Codecs none, zip (inflated as a stream) and BLOSC (frame
 * by frame, through the WebAssembly codec `decodeNvdbAsync` uses). Every grid is validated, checksums included.
 *
 * Rejects with HsError: InvalidArgument naming the segment, grid and field of a bad or truncated header, payload or
 * grid, a bad `chunkBytes`, or options that are not an object or hold a field that is not an option; NotSupported for more than 2^32 - 1 bytes of grids in one segment, a resource the host
 * cannot write, or BLOSC without numcodecs; the resource's errors; NotFound (ENOENT), PermissionDenied (EACCES, EPERM) or InvalidArgument (EISDIR, ...) for a
 * file that cannot be read, the OS error as the cause.
 * Nothing is left allocated on failure.
 *
 * @example
 * ```ts
 * import { mkdtemp, rm } from 'node:fs/promises';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { GridType, HostResource, readNvdbFile, voxelsToGrid, writeNvdbFile } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const host = new HostResource(backend);
 * const dir = await mkdtemp(join(tmpdir(), 'nvdb-'));
 * const path = join(dir, 'smoke.nvdb');
 * const smoke = unwrap(voxelsToGrid(backend, host, { coords: new Int32Array([0, 0, 0]), values: new Float32Array([0.5]) }, { gridType: GridType.Float, name: 'smoke' }));
 * await writeNvdbFile(path, smoke, 'zip');
 * smoke.dispose();
 * // streamed from disk a chunk at a time: the file is never held whole
 * const handles = await readNvdbFile(backend, host, path, { chunkBytes: 1 << 16 });
 * for (const h of handles) console.log(`'${h.grid()?.name}': value at (0,0,0) ${unwrap(h.accessor()).getValue(0, 0, 0)}`);
 * for (const h of handles) h.dispose();
 * await rm(dir, { recursive: true });
 * ```
 */
export async function readNvdbFile(backend: Backend, resource: SyncResource, path: string, options: ReadNvdbFileOptions = {}): Promise<GridHandle<ResourceBuffer<SyncResource, Uint8ArrayConstructor>>[]> {
  unwrap(checkOptionFields('readNvdbFile', options, ['chunkBytes']));
  const chunk = options.chunkBytes ?? 16 * 2 ** 20;
  if (!Number.isSafeInteger(chunk) || chunk < 1) throw new HsError(ErrorCode.InvalidArgument, `readNvdbFile: chunkBytes must be a positive integer, got ${String(chunk)}`);
  return fileCall('read', path, () => readHandles(backend, resource, path, chunk));
}

/** `readNvdbFile` past its argument checks. */
async function readHandles(backend: Backend, resource: SyncResource, path: string, chunk: number): Promise<GridHandle<ResourceBuffer<SyncResource, Uint8ArrayConstructor>>[]> {
  // A FIFO, folder or device at `path` is refused at once (O_NONBLOCK open, fstat), never waited on.
  const { handle: fh, size } = await openRegularFile(path);
  const handles: GridHandle<ResourceBuffer<SyncResource, Uint8ArrayConstructor>>[] = [];
  try {
    if (size === 0) throw new HsError(ErrorCode.InvalidArgument, `readNvdbFile: ${path} is empty`);
    const magic = new Uint8Array(Math.min(8, size));
    await readExactly(fh, magic, 0, path);
    const first = magic.length === 8 ? new DataView(magic.buffer).getBigUint64(0, true) : 0n;
    if (first === GRID_MAGIC || first === LEGACY_GRID_MAGIC) {
      for (let start = 0; start < size; ) {
        const length = await chainLength(fh, start, size);
        if (length > MAX_GRID_SIZE) unwrap(tooLargeForHost(`raw grid buffer at byte ${start}`, length));
        const { buffer, view } = hostBuffer(backend, resource, Math.max(length, 1));
        try {
          for (let done = 0; done < length; done += chunk) await readExactly(fh, view.subarray(done, Math.min(length, done + chunk)), start + done, `raw grid buffer at byte ${start}`);
        } catch (e) {
          buffer.dispose();
          throw e;
        }
        const handle = adopt(backend, buffer, `raw grid buffer at byte ${start}`);
        handles.push(handle);
        const last = handle.grids[handle.grids.length - 1]!;
        start += last.byteOffset + last.gridSize;
      }
      return handles;
    }
    for (let start = 0, index = 0; start < size; index++) {
      const headers = await segmentHeaders(fh, start, index, size);
      const total = headers.grids.reduce((n, m) => n + m.gridSize, 0);
      if (total > MAX_GRID_SIZE) unwrap(tooLargeForHost(`.nvdb segment ${index}`, total));
      if (headers.codec === 'blosc') await checkBloscChunks(fh, headers, start, index);
      const { buffer, view } = hostBuffer(backend, resource, total);
      try {
        let into = 0;
        for (const [g, m] of headers.grids.entries()) {
          await decodeInto(fh, headers, g, start, view.subarray(into, into + m.gridSize), chunk, index);
          into += m.gridSize;
        }
      } catch (e) {
        buffer.dispose();
        throw e;
      }
      const handle = adopt(backend, buffer, `.nvdb segment ${index}`);
      handles.push(handle);
      const mismatch = metadataMismatch(headers.grids, handle.grids, index, start);
      if (mismatch !== null) unwrap(mismatch);
      start += headers.end;
    }
    return handles;
  } catch (e) {
    for (const h of handles) h.dispose();
    throw e;
  } finally {
    await fh.close();
  }
}

/**
 * Bytes of the raw grid chain at `start`: each grid's gridSize, as many as the first grid's gridCount, clamped to the
 * file (validation then names whatever is wrong with them).
 */
async function chainLength(fh: FileHandle, start: number, size: number): Promise<number> {
  const field = new Uint8Array(8);
  const v = new DataView(field.buffer);
  if (size - start < Grid.gridSize + 8) return size - start;
  await readExactly(fh, field, start + Grid.gridIndex, 'raw grid buffer'); // gridIndex, then gridCount
  const count = Math.max(1, v.getUint32(4, true));
  let length = 0;
  for (let g = 0; g < count && start + length + Grid.gridSize + 8 <= size; g++) {
    await readExactly(fh, field, start + length + Grid.gridSize, 'raw grid buffer');
    const gridSize = Number(v.getBigUint64(0, true));
    if (gridSize < 32 || start + length + gridSize > size) return size - start;
    length += gridSize;
  }
  return length;
}

/**
 * Writes the handles to `path` as a `.nvdb` file, one segment per handle, each encoded and written before the next
 * (see `writeNvdbAsync`; codecs none, zip and BLOSC), into a staging file beside `path` that is renamed onto it at the
 * end (`createStagingFile` of @hs/streams: O_CREAT|O_EXCL|O_NOFOLLOW|O_NONBLOCK, a random name): readers see the old file
 * or the whole new one, a symlink or FIFO at `path` is replaced, never written through, and a failed write leaves
 * `path` as it was and no staging file. Rejects with the errors of `writeNvdbAsync`; InvalidArgument when `path`'s
 * folder is a symbolic link; NotFound, PermissionDenied or InvalidArgument (ENOSPC, EISDIR, ...) for a file that cannot
 * be created or written.
 *
 * @example
 * ```ts
 * import { mkdtemp, rm } from 'node:fs/promises';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { GridType, HostResource, readNvdbFile, voxelsToGrid, writeNvdbFile } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const host = new HostResource(backend);
 * const coords = new Int32Array([0, 0, 0]);
 * const density = unwrap(voxelsToGrid(backend, host, { coords, values: new Float32Array([1]) }, { gridType: GridType.Float, name: 'density' }));
 * const velocity = unwrap(voxelsToGrid(backend, host, { coords, values: new Float32Array([0, 0, 1]) }, { gridType: GridType.Vec3f, name: 'velocity' }));
 * const dir = await mkdtemp(join(tmpdir(), 'nvdb-'));
 * const path = join(dir, 'scene.nvdb');
 * await writeNvdbFile(path, [density, velocity], 'zip'); // staged beside path and renamed: readers never see half a file
 * const back = await readNvdbFile(backend, host, path);
 * console.log(`scene.nvdb: ${back.map((h) => h.grid()?.name).join(', ')}`);
 * for (const h of [...back, density, velocity]) h.dispose();
 * await rm(dir, { recursive: true });
 * ```
 */
export async function writeNvdbFile(path: string, handles: GridHandle | readonly GridHandle[], codec: NvdbCodec = 'none'): Promise<void> {
  const list = Array.isArray(handles) ? (handles as readonly GridHandle[]) : [handles as GridHandle];
  if (list.length === 0) throw new HsError(ErrorCode.InvalidArgument, 'writeNvdbFile: no handles to write');
  checkWriterCodec('writeNvdbFile', codec);
  unwrap(handlesProblem('writeNvdbFile', list) ?? OK_VOID);
  const staging = await createStagingFile(path);
  try {
    for (const handle of list) {
      const bytes = await writeNvdbAsync(handle, codec);
      await fileCall('write', path, () => staging.handle.write(bytes));
    }
  } catch (e) {
    await staging.discard();
    throw e;
  }
  await staging.commit();
}
