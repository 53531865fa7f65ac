import { constants } from 'node:buffer';
import { closeSync } from 'node:fs';
import { ErrorCode, HsError, MemoryKind, err, ok, type Result } from '@hs/streams';
import { errnoCode, errnoErrorCode, loadIpcNative, type IpcNativeBinding } from './ipc-native.js';

/** Options of `SharedSegment.create`. */
export interface SharedSegmentCreateOptions {
  /** POSIX shm name: `/` then 1..200 characters of `[A-Za-z0-9._-]`. */
  readonly name: string;
  /** Size in bytes, a positive safe integer; at most `buffer.constants.MAX_LENGTH` (the largest ArrayBuffer). */
  readonly byteSize: number;
}

/** Options of `SharedSegment.open`. */
export interface SharedSegmentOpenOptions {
  /** POSIX shm name, as given to `create`. */
  readonly name: string;
  /**
   * Bytes to map: the size the creator announced (a topic's HELLO segment bytes), a positive safe integer.
   * The segment's file must hold at least that many; a larger file is mapped only this far, never beyond.
   */
  readonly byteSize: number;
  /**
   * `'read'` (the default) opens the file read-only and maps it `PROT_READ`: a subscriber can read the
   * publisher's slots but a stray store faults (SIGSEGV) instead of corrupting them. `'readWrite'` maps it
   * read/write, for memory both sides write (the topic mailbox's rings).
   */
  readonly access?: SegmentAccess;
}

/** Options of `SharedSegment.createSealed`. */
export interface SharedSegmentSealedOptions {
  /** A label for /proc/<pid>/maps (`memfd:<label>`); not a name anyone can open. */
  readonly label: string;
  /** Size in bytes, a positive safe integer; at most `buffer.constants.MAX_LENGTH`. */
  readonly byteSize: number;
}

/** Options of `SharedSegment.fromDescriptor`. */
export interface SharedSegmentDescriptorOptions {
  /** A descriptor of a sealed segment received from its creator (it stays the caller's: close it once mapped). */
  readonly fd: number;
  /** Bytes to map: the size the creator announced; the file must hold at least that many. */
  readonly byteSize: number;
  /** `'read'` (the default) maps it `PROT_READ`; `'readWrite'` read/write. */
  readonly access?: SegmentAccess;
}

/** How `SharedSegment.open` maps a segment: read-only or read/write. */
export type SegmentAccess = 'read' | 'readWrite';

/**
 * How a subscriber maps a publisher's data segment: read-only, as it only ever reads the slots (what it
 * writes, the release ring, lives in the mailbox segment or goes over the socket). Pinned-host segments are
 * the exception: `cudaHostRegister` page-locks only writable pages, so they stay read/write.
 * @internal
 */
export function subscriberSegmentAccess(kind: MemoryKind): SegmentAccess {
  return kind === MemoryKind.PinnedHost ? 'readWrite' : 'read';
}

const SEGMENT_NAME = /^\/[A-Za-z0-9._-]{1,200}$/;

/** Where POSIX shared memory lives on Linux (shm_open), named by the errors that concern its room. */
const SHM_DIRECTORY = '/dev/shm';

function osError(thrown: unknown, what: string, room = `${SHM_DIRECTORY} cannot hold it: free room there (\`df -h ${SHM_DIRECTORY}\`, remove stale segments)`): Result<never> {
  const code = errnoCode(thrown);
  const detail = `${what}: ${(thrown as Error).message}`;
  const errorCode = errnoErrorCode(code);
  switch (code) {
    case 'EEXIST':
      return err(errorCode, `${detail}; pick another name or unlink the stale one`, thrown);
    case 'ENOENT':
      return err(errorCode, `${detail}; is the publisher running?`, thrown);
    case 'EACCES':
    case 'EPERM':
      return err(errorCode, `${detail}; segments must belong to this user with mode 0600`, thrown);
    case 'ENOMEM':
    case 'ENOSPC':
    case 'EDQUOT':
      return err(errorCode, `${detail}; ${room} or make it smaller (fewer or smaller slots)`, thrown);
    case 'EFBIG':
      return err(errorCode, `${detail}; the size is above this process's file-size limit (\`ulimit -f\`)`, thrown);
    case 'EMFILE':
    case 'ENFILE':
      return err(errorCode, `${detail}; too many open files (\`ulimit -n\`)`, thrown);
    case 'EUNSEALED':
      return err(ErrorCode.ProtocolError, detail, thrown);
    case 'ENOSYS':
      return err(ErrorCode.NotSupported, `${detail}; this kernel has no memfd_create (Linux 3.17 or later is needed)`, thrown);
    default:
      return err(errorCode, detail, thrown);
  }
}

function checkName(name: unknown, who: string): void {
  if (typeof name !== 'string' || !SEGMENT_NAME.test(name) || name === '/.' || name === '/..') {
    throw new HsError(ErrorCode.InvalidArgument, `${who}: segment name must be "/" followed by 1..200 characters of [A-Za-z0-9._-], got ${JSON.stringify(name)}`);
  }
}

function checkSize(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new HsError(ErrorCode.InvalidArgument, `${what} must be a safe integer >= 1 (bytes), got ${String(value)}`);
  }
  return value;
}

/** A mapping is one external ArrayBuffer, so it cannot be larger than the largest one Node.js makes. */
function tooLarge(name: string, byteSize: number, who: string): Result<never> | null {
  if (byteSize <= constants.MAX_LENGTH) return null;
  return err(
    ErrorCode.InvalidArgument,
    `${who}: segment ${name} of ${byteSize} bytes is larger than the largest ArrayBuffer this Node.js can map (${constants.MAX_LENGTH} bytes, buffer.constants.MAX_LENGTH); use fewer or smaller slots`,
  );
}

/**
 * One POSIX shared-memory segment mapped into this process as a zero-copy `Uint8Array`.
 * `create` makes it exclusively with mode 0600 and maps it read/write; `open` maps an existing one after
 * checking that this user owns it and nobody else may access it, read-only unless asked for `'readWrite'`
 * (`writable` says which). `close()` unmaps at once and detaches the buffer, so views over
 * it read as empty instead of touching unmapped memory; `unlink()` removes the name (mappings stay valid).
 *
 * Spec: "Crossing process boundaries: the generation fence" (the boundary pool's host storage).
 *
 * @example
 * ```ts
 * import { unwrap } from '@hs/streams';
 * import { SharedSegment, ipcAvailability } from '@hs/ipc';
 *
 * const ipc = ipcAvailability();
 * if (!ipc.available) console.log(ipc.reason);
 * else {
 *   // the creator: a sealed memfd with no name, every page allocated, its size fixed for good
 *   const segment = unwrap(SharedSegment.createSealed({ label: 'frames', byteSize: 1 << 20 }));
 *   segment.bytes.fill(42, 0, 256);
 *   // a peer maps the descriptor it received (SCM_RIGHTS; here the same process), read-only by default
 *   const peer = unwrap(SharedSegment.fromDescriptor({ fd: segment.descriptor, byteSize: segment.byteSize }));
 *   console.log(`${peer.byteSize} bytes seen by the peer, writable ${peer.writable}, first byte ${peer.bytes[0]}`);
 *   peer.close();
 *   segment.close(); // unmaps and closes the descriptor; views over it read as empty
 *   console.log(`after close: ${segment.bytes.byteLength} bytes`);
 * }
 * ```
 */
export class SharedSegment {
  readonly #native: IpcNativeBinding;
  readonly #buffer: ArrayBuffer;
  readonly #bytes: Uint8Array;
  /** The sealed segment's descriptor (`createSealed`), closed by `close()`; -1 for a named segment. */
  #fd: number;
  #closed = false;

  private constructor(
    native: IpcNativeBinding,
    /** The shm name, `/…`; `memfd:<label>` for a sealed segment made here, `fd:<n>` for one received. */
    readonly name: string,
    buffer: ArrayBuffer,
    /** Address of the first byte in this process (for registering the pages with CUDA). */
    readonly address: bigint,
    /** Size of the mapping in bytes. */
    readonly byteSize: number,
    /** False for a read-only mapping (`open` with access `'read'`): writing its bytes kills the process (SIGSEGV). */
    readonly writable: boolean,
    fd = -1,
  ) {
    this.#fd = fd;
    this.#native = native;
    this.#buffer = buffer;
    this.#bytes = new Uint8Array(buffer);
  }

  /**
   * Creates and maps a new segment (O_EXCL, mode 0600) with every page allocated up front, so a full
   * /dev/shm is an error here and never a SIGBUS at a later write. Returns `AlreadyExists` when the name is
   * taken, `OutOfMemory` when /dev/shm cannot hold it (ENOSPC, ENOMEM), `ResourceExhausted` above the
   * process's file-size limit (EFBIG), `InvalidArgument` above `buffer.constants.MAX_LENGTH`,
   * `NotSupported` when the IPC addon is unavailable. Nothing is left behind on failure.
   * @throws HsError `InvalidArgument` for a malformed name or size.
   */
  static create(options: SharedSegmentCreateOptions): Result<SharedSegment> {
    checkName(options.name, 'SharedSegment.create');
    const byteSize = checkSize(options.byteSize, 'SharedSegment.create byteSize');
    const refused = tooLarge(options.name, byteSize, 'SharedSegment.create');
    if (refused !== null) return refused;
    const native = loadIpcNative();
    if (!native.ok) return native;
    try {
      const m = native.value.createSegment(options.name, byteSize, constants.MAX_LENGTH);
      return ok(new SharedSegment(native.value, options.name, m.buffer, m.address, m.byteSize, true));
    } catch (thrown) {
      return osError(thrown, 'SharedSegment.create');
    }
  }

  /**
   * Maps the first `byteSize` bytes of an existing segment (a larger file is mapped only that far).
   * Returns `NotFound` when it does not exist, `PermissionDenied` when another user owns it or its mode
   * lets others in, `InvalidArgument` when its file is smaller than `byteSize` (naming both sizes) or
   * `byteSize` is above `buffer.constants.MAX_LENGTH`. The mapping is read-only (`PROT_READ`, `writable`
   * false) unless `access` is `'readWrite'`: never write into `bytes` of a read-only segment, the store
   * faults and kills the process.
   * @throws HsError `InvalidArgument` for a malformed name, size or access.
   */
  static open(options: SharedSegmentOpenOptions): Result<SharedSegment> {
    checkName(options.name, 'SharedSegment.open');
    const byteSize = checkSize(options.byteSize, 'SharedSegment.open byteSize');
    const access = options.access ?? 'read';
    if (access !== 'read' && access !== 'readWrite') {
      throw new HsError(ErrorCode.InvalidArgument, `SharedSegment.open: access must be 'read' or 'readWrite', got ${JSON.stringify(access)}`);
    }
    const refused = tooLarge(options.name, byteSize, 'SharedSegment.open');
    if (refused !== null) return refused;
    const native = loadIpcNative();
    if (!native.ok) return native;
    try {
      const m = native.value.openSegment(options.name, byteSize, constants.MAX_LENGTH, access === 'readWrite');
      // An addon older than ABI 4 ignores the flag and maps read/write: report what it did, not what was asked.
      return ok(new SharedSegment(native.value, options.name, m.buffer, m.address, m.byteSize, m.writable ?? true));
    } catch (thrown) {
      return osError(thrown, 'SharedSegment.open');
    }
  }

  /**
   * Creates a sealed anonymous segment (wire version 2): a memfd no name reaches, every page allocated, its
   * size sealed (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) so that nobody, the peers it is passed to
   * included, can ftruncate it under a mapping (their ftruncate fails with EPERM instead of a SIGBUS here).
   * `descriptor` is what to pass (SCM_RIGHTS); `close()` closes it. `OutOfMemory` when memory cannot back it,
   * `ResourceExhausted` (EMFILE, EFBIG), `InvalidArgument` above `buffer.constants.MAX_LENGTH`,
   * `NotSupported` without memfds (or the addon). Nothing is left behind on failure.
   * @throws HsError `InvalidArgument` for a malformed label or size.
   */
  static createSealed(options: SharedSegmentSealedOptions): Result<SharedSegment> {
    if (typeof options.label !== 'string' || !/^[A-Za-z0-9._-]{1,200}$/.test(options.label)) {
      throw new HsError(ErrorCode.InvalidArgument, `SharedSegment.createSealed: label must be 1..200 characters of [A-Za-z0-9._-], got ${JSON.stringify(options.label)}`);
    }
    const byteSize = checkSize(options.byteSize, 'SharedSegment.createSealed byteSize');
    const refused = tooLarge(`memfd:${options.label}`, byteSize, 'SharedSegment.createSealed');
    if (refused !== null) return refused;
    const native = loadIpcNative();
    if (!native.ok) return native;
    if (typeof native.value.createSealedSegment !== 'function') return err(ErrorCode.NotSupported, 'SharedSegment.createSealed: the @hs/ipc addon is older than ABI 5 (no sealed segments); rebuild it (npx hs-build-addon ipc)');
    try {
      const m = native.value.createSealedSegment(options.label, byteSize, constants.MAX_LENGTH);
      return ok(new SharedSegment(native.value, `memfd:${options.label}`, m.buffer, m.address, m.byteSize, true, m.fd));
    } catch (thrown) {
      return osError(thrown, 'SharedSegment.createSealed', 'memory cannot back it (a memfd counts against RAM and the memory cgroup): free memory');
    }
  }

  /**
   * Maps the first `byteSize` bytes of a sealed segment received as a descriptor (a topic's HELLO). Refuses
   * with `ProtocolError` a descriptor not sealed against shrinking and growing (its peer could truncate it
   * under this mapping: a SIGBUS at the next read), with `InvalidArgument` one whose file is smaller than
   * `byteSize` (naming both) or a size above `buffer.constants.MAX_LENGTH`. The descriptor stays the
   * caller's (close it: the mapping does not need it).
   * @throws HsError `InvalidArgument` for a malformed descriptor, size or access.
   */
  static fromDescriptor(options: SharedSegmentDescriptorOptions): Result<SharedSegment> {
    const fd = options.fd;
    if (typeof fd !== 'number' || !Number.isSafeInteger(fd) || fd < 0) throw new HsError(ErrorCode.InvalidArgument, `SharedSegment.fromDescriptor: fd must be a descriptor (integer >= 0), got ${String(fd)}`);
    const byteSize = checkSize(options.byteSize, 'SharedSegment.fromDescriptor byteSize');
    const access = options.access ?? 'read';
    if (access !== 'read' && access !== 'readWrite') {
      throw new HsError(ErrorCode.InvalidArgument, `SharedSegment.fromDescriptor: access must be 'read' or 'readWrite', got ${JSON.stringify(access)}`);
    }
    const refused = tooLarge(`fd ${fd}`, byteSize, 'SharedSegment.fromDescriptor');
    if (refused !== null) return refused;
    const native = loadIpcNative();
    if (!native.ok) return native;
    if (typeof native.value.openSealedSegment !== 'function') return err(ErrorCode.NotSupported, 'SharedSegment.fromDescriptor: the @hs/ipc addon is older than ABI 5 (no sealed segments); rebuild it (npx hs-build-addon ipc)');
    try {
      const m = native.value.openSealedSegment(fd, byteSize, constants.MAX_LENGTH, access === 'readWrite');
      return ok(new SharedSegment(native.value, `fd:${fd}`, m.buffer, m.address, m.byteSize, m.writable));
    } catch (thrown) {
      return osError(thrown, 'SharedSegment.fromDescriptor');
    }
  }

  /**
   * Removes a segment name without mapping it (cleanup of a crashed creator's segment). Returns true when
   * it existed. `NotSupported` without the addon; `PermissionDenied` for another user's segment.
   * @throws HsError `InvalidArgument` for a malformed name.
   */
  static unlinkName(name: string): Result<boolean> {
    checkName(name, 'SharedSegment.unlinkName');
    const native = loadIpcNative();
    if (!native.ok) return native;
    try {
      return ok(native.value.unlinkSegment(name));
    } catch (thrown) {
      return osError(thrown, 'SharedSegment.unlinkName');
    }
  }

  /** The whole mapping, `byteSize` bytes (empty after `close()`). */
  get bytes(): Uint8Array {
    return this.#bytes;
  }

  /** True after `close()`. */
  get closed(): boolean {
    return this.#closed;
  }

  /** The descriptor of a sealed segment made by `createSealed` (to pass to peers), -1 for others or after `close()`. */
  get descriptor(): number {
    return this.#fd;
  }

  /** Closes the descriptor of a sealed segment (once passed to every peer that needs it); the mapping stays. Idempotent. */
  closeDescriptor(): void {
    if (this.#fd >= 0) closeSync(this.#fd);
    this.#fd = -1;
  }

  /**
   * Removes the name (idempotent: true when this call removed it). Mappings stay valid until closed. A
   * sealed or received segment has no name: false.
   */
  unlink(): Result<boolean> {
    if (!this.name.startsWith('/')) return ok(false);
    try {
      return ok(this.#native.unlinkSegment(this.name));
    } catch (thrown) {
      return osError(thrown, 'SharedSegment.unlink');
    }
  }

  /** Unmaps now and detaches the buffer (views over it become empty). Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#native.closeSegment(this.#buffer);
    this.closeDescriptor();
  }
}
