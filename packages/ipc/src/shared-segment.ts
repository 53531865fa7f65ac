import { ErrorCode, HsError, err, ok, type Result } from '@hs/streams';
import { errnoCode, loadIpcNative, type IpcNativeBinding } from './ipc-native.js';

/** Options of `SharedSegment.create`. */
export interface SharedSegmentCreateOptions {
  /** POSIX shm name: `/` then 1..200 characters of `[A-Za-z0-9._-]`. */
  readonly name: string;
  /** Size in bytes, a positive safe integer. */
  readonly byteSize: number;
}

/** Options of `SharedSegment.open`. */
export interface SharedSegmentOpenOptions {
  /** POSIX shm name, as given to `create`. */
  readonly name: string;
  /** Smallest acceptable size in bytes (the segment may be larger); default 1. */
  readonly minByteSize?: number;
}

const SEGMENT_NAME = /^\/[A-Za-z0-9._-]{1,200}$/;

function osError(thrown: unknown, what: string): Result<never> {
  const code = errnoCode(thrown);
  const detail = `${what}: ${(thrown as Error).message}`;
  switch (code) {
    case 'EEXIST':
      return err(ErrorCode.AlreadyExists, `${detail}; pick another name or unlink the stale one`, thrown);
    case 'ENOENT':
      return err(ErrorCode.NotFound, `${detail}; is the publisher running?`, thrown);
    case 'EACCES':
    case 'EPERM':
      return err(ErrorCode.PermissionDenied, `${detail}; segments must belong to this user with mode 0600`, thrown);
    case 'EINVAL':
      return err(ErrorCode.InvalidArgument, detail, thrown);
    case 'ENOMEM':
    case 'ENOSPC':
      return err(ErrorCode.OutOfMemory, `${detail}; /dev/shm is full or the size is too large`, thrown);
    case 'ENOTSUP':
      return err(ErrorCode.NotSupported, detail, thrown);
    default:
      return err(ErrorCode.InvalidState, detail, thrown);
  }
}

function checkName(name: unknown, who: string): void {
  if (typeof name !== 'string' || !SEGMENT_NAME.test(name) || name === '/.' || name === '/..') {
    throw new HsError(ErrorCode.InvalidArgument, `${who}: segment name must be "/" followed by 1..200 characters of [A-Za-z0-9._-], got ${JSON.stringify(name)}`);
  }
}

function checkSize(value: unknown, what: string, min: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new HsError(ErrorCode.InvalidArgument, `${what} must be a safe integer >= ${min} (bytes), got ${String(value)}`);
  }
  return value;
}

/**
 * One POSIX shared-memory segment mapped into this process, read/write, as a zero-copy `Uint8Array`.
 * `create` makes it exclusively with mode 0600; `open` maps an existing one after checking that this user
 * owns it and nobody else may access it. `close()` unmaps at once and detaches the buffer, so views over
 * it read as empty instead of touching unmapped memory; `unlink()` removes the name (mappings stay valid).
 *
 * Spec: "Crossing process boundaries: the generation fence" (the boundary pool's host storage).
 */
export class SharedSegment {
  readonly #native: IpcNativeBinding;
  readonly #buffer: ArrayBuffer;
  readonly #bytes: Uint8Array;
  #closed = false;

  private constructor(
    native: IpcNativeBinding,
    /** The shm name, `/…`. */
    readonly name: string,
    buffer: ArrayBuffer,
    /** Address of the first byte in this process (for registering the pages with CUDA). */
    readonly address: bigint,
    /** Size of the mapping in bytes. */
    readonly byteSize: number,
  ) {
    this.#native = native;
    this.#buffer = buffer;
    this.#bytes = new Uint8Array(buffer);
  }

  /**
   * Creates and maps a new segment (O_EXCL, mode 0600). Returns `AlreadyExists` when the name is taken,
   * `OutOfMemory` when /dev/shm cannot hold it, `NotSupported` when the IPC addon is unavailable.
   * @throws HsError `InvalidArgument` for a malformed name or size.
   */
  static create(options: SharedSegmentCreateOptions): Result<SharedSegment> {
    checkName(options.name, 'SharedSegment.create');
    const byteSize = checkSize(options.byteSize, 'SharedSegment.create byteSize', 1);
    const native = loadIpcNative();
    if (!native.ok) return native;
    try {
      const m = native.value.createSegment(options.name, byteSize);
      return ok(new SharedSegment(native.value, options.name, m.buffer, m.address, m.byteSize));
    } catch (thrown) {
      return osError(thrown, 'SharedSegment.create');
    }
  }

  /**
   * Maps an existing segment. Returns `NotFound` when it does not exist, `PermissionDenied` when another
   * user owns it or its mode lets others in, `InvalidArgument` when it is smaller than `minByteSize`.
   * @throws HsError `InvalidArgument` for a malformed name or size.
   */
  static open(options: SharedSegmentOpenOptions): Result<SharedSegment> {
    checkName(options.name, 'SharedSegment.open');
    const minByteSize = checkSize(options.minByteSize ?? 1, 'SharedSegment.open minByteSize', 1);
    const native = loadIpcNative();
    if (!native.ok) return native;
    try {
      const m = native.value.openSegment(options.name, minByteSize);
      return ok(new SharedSegment(native.value, options.name, m.buffer, m.address, m.byteSize));
    } catch (thrown) {
      return osError(thrown, 'SharedSegment.open');
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

  /** Removes the name (idempotent: true when this call removed it). Mappings stay valid until closed. */
  unlink(): Result<boolean> {
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
  }
}
