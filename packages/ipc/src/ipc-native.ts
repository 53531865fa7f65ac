import { fileURLToPath } from 'node:url';
import { loadAddon, type AddonLoad } from '@hs/native-addon';
import { ErrorCode, err, ok, type Result } from '@hs/streams';

/** A mapped shared-memory segment as the addon hands it out. */
export interface NativeMapping {
  /** External ArrayBuffer over the whole mapping (zero copy). Detached by `closeSegment`. */
  readonly buffer: ArrayBuffer;
  /** Address of the mapping's first byte in this process. */
  readonly address: bigint;
  /** Size of the mapping in bytes. */
  readonly byteSize: number;
  /** False for a read-only (PROT_READ) mapping: a store into it faults (SIGSEGV). */
  readonly writable: boolean;
}

/**
 * The functions of `build/hs_ipc.node` (native/ipc/src/ipc-addon.cc). Errors throw with an errno `code`.
 * `maxByteSize` is `buffer.constants.MAX_LENGTH`: the addon refuses (EINVAL) a larger size before mapping.
 */
export interface IpcNativeBinding {
  /** A new segment of `byteSize` bytes, every page allocated (ENOSPC or ENOMEM when /dev/shm is full). */
  createSegment(name: string, byteSize: number, maxByteSize: number): NativeMapping;
  /**
   * The first `byteSize` bytes of an existing segment; EINVAL when its file is smaller. Read-only (O_RDONLY,
   * PROT_READ) unless `writable` is true.
   */
  openSegment(name: string, byteSize: number, maxByteSize: number, writable: boolean): NativeMapping;
  unlinkSegment(name: string): boolean;
  /**
   * Wire version 2 (ABI 5; absent before): a new memfd of `byteSize` bytes (every page allocated) whose size
   * is sealed (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), mapped read/write; `fd` is the caller's to close.
   */
  readonly createSealedSegment?: (label: string, byteSize: number, maxByteSize: number) => NativeMapping & { readonly fd: number };
  /** Maps a received sealed segment; throws code EUNSEALED for a descriptor not sealed against shrinking and growing. */
  readonly openSealedSegment?: (fd: number, byteSize: number, maxByteSize: number, writable: boolean) => NativeMapping;
  /** The F_GET_SEALS bits of `fd`, or -1 for a descriptor that cannot carry seals. */
  readonly segmentSeals?: (fd: number) => number;
  /** One non-blocking sendmsg of `bytes` with `fds` as SCM_RIGHTS on a connected socket; returns the bytes sent. */
  readonly sendWithDescriptors?: (socketFd: number, bytes: Uint8Array, fds: readonly number[]) => number;
  /** Connects (on a worker thread) and reads the first `byteLength` bytes and the descriptors that came with them. */
  readonly connectAndReceive?: (path: string, byteLength: number, timeoutMs: number) => Promise<{ readonly fd: number; readonly frame: Buffer; readonly fds: number[] }>;
  closeSegment(buffer: ArrayBuffer): boolean;
  peerCredentials(fd: number): { uid: number; gid: number; pid: number };
  processAlive(pid: number): boolean;
  /**
   * Liveness locks (native/ipc/src/shm-segment.h), absent in an addon older than ABI 4: a shared flock on
   * the shm file `name` held until exit (returns the fd to keep open).
   */
  readonly holdLivenessLock?: (name: string) => number;
  /** An exclusive lock on `name` without waiting: the fd when nobody holds it, -1 while a process does, -2 when there is no such file. */
  readonly tryReapLock?: (name: string) => number;
  /** Removes `name` and closes the fd of `tryReapLock`. */
  readonly releaseReapLock?: (name: string, fd: number) => void;
  readonly abiVersion: number;
  /**
   * Topic mailbox doorbells (native/ipc/src/doorbell-watch.cc); absent when the addon was built without
   * libuv's header, and topics then carry descriptors over the socket. See `mailboxSupport()`. Since ABI 6
   * a doorbell is an anonymous pipe, `[readFd, writeFd]` (before: named FIFOs).
   */
  readonly createDoorbellPipe?: () => [number, number];
  /** A checked, non-blocking duplicate of a received doorbell end (EPERM: not a pipe, or the other direction); `fd` stays the caller's. */
  readonly adoptDoorbell?: (fd: number, readEnd: boolean) => number;
  readonly ringDoorbell?: (fd: number) => void;
  readonly closeDoorbell?: (fd: number) => void;
  readonly watchDoorbell?: (fd: number, onRing: () => void) => object;
  readonly unwatchDoorbell?: (watch: object) => void;
  readonly commitRing?: (buffer: ArrayBuffer, controlOffset: number, tail: number, doorbellFd: number) => boolean;
  readonly parkRing?: (buffer: ArrayBuffer, controlOffset: number) => number;
}

/** The doorbell functions of the addon, all present. */
export type DoorbellBinding = Required<Pick<IpcNativeBinding, 'createDoorbellPipe' | 'adoptDoorbell' | 'ringDoorbell' | 'closeDoorbell' | 'watchDoorbell' | 'unwatchDoorbell' | 'commitRing' | 'parkRing'>>;

/** One `Result` per load outcome, so every call for the same path returns the same object. */
const asResult = new WeakMap<AddonLoad<IpcNativeBinding>, Result<IpcNativeBinding>>();

/**
 * Loads `hs_ipc.node` once, from the prebuilt platform package (`@hs/native-linux-x64-gnu`), else from a local
 * build (`build/hs_ipc.node`, made by `npx hs-build-addon ipc`). A missing or broken addon (a platform
 * without a prebuilt and no local build, a platform without POSIX shared memory) is `NotSupported` whose
 * text says how to build it; nothing throws. `HS_IPC_NATIVE_PATH` overrides the addon's path.
 */
export function loadIpcNative(): Result<IpcNativeBinding> {
  const native = loadAddon<IpcNativeBinding>({
    name: '@hs/ipc addon',
    // dist/index.js or src/ipc-native.ts: the package root is one folder up.
    packageRoot: fileURLToPath(new URL('..', import.meta.url)),
    file: 'build/hs_ipc.node',
    prebuilt: 'hs_ipc.node',
    envOverride: 'HS_IPC_NATIVE_PATH',
    buildCommand: 'npx hs-build-addon ipc',
    buildRequires: 'cmake and a C++ compiler',
  });
  let result = asResult.get(native);
  if (result === undefined) {
    result = native.ok ? ok(native.addon) : err(ErrorCode.NotSupported, `IPC is unavailable: ${native.reason}`, native.cause);
    asResult.set(native, result);
  }
  return result;
}

/** The answer of `ipcAvailability()`. */
export type IpcAvailability =
  | {
      /** The addon loaded: topics and segments work. */
      readonly available: true;
    }
  | {
      /** The addon is missing or failed to load. */
      readonly available: false;
      /** Why, and how to build it. */
      readonly reason: string;
    };

/**
 * Whether this process can use @hs/ipc (the native addon loaded). `{ available: false, reason }` says why
 * not and how to fix it; every IPC call then returns `NotSupported` with the same reason.
 *
 * @example
 * ```ts
 * import { ipcAvailability } from '@hs/ipc';
 *
 * // without the native addon every IPC call returns NotSupported with this same reason
 * const ipc = ipcAvailability();
 * if (ipc.available) console.log('IPC available: topics and shared segments work in this process');
 * else console.log(`IPC unavailable, running without topics: ${ipc.reason}`);
 * ```
 */
export function ipcAvailability(): IpcAvailability {
  const native = loadIpcNative();
  return native.ok ? { available: true } : { available: false, reason: native.error.detail };
}

/** The errno name an addon call threw with (`EEXIST`, ...), or `undefined` for other throws. */
export function errnoCode(thrown: unknown): string | undefined {
  const code = (thrown as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * The `ErrorCode` of an errno name an addon call threw with, the same for every binding (segments,
 * sockets, doorbells): EEXIST `AlreadyExists`; ENOENT `NotFound`; EACCES, EPERM, ELOOP (a symlink where none
 * may be), EROFS `PermissionDenied`; EINVAL, ENAMETOOLONG, ENOTDIR `InvalidArgument`; ENOMEM, ENOSPC, EDQUOT
 * (no room: memory, a file system, a quota) `OutOfMemory`; EFBIG (a file-size limit), EMFILE, ENFILE
 * (descriptor limits) `ResourceExhausted`; ENOTSUP `NotSupported`; anything else `InvalidState`.
 */
export function errnoErrorCode(code: string | undefined): ErrorCode {
  switch (code) {
    case 'EEXIST':
      return ErrorCode.AlreadyExists;
    case 'ENOENT':
      return ErrorCode.NotFound;
    case 'EACCES':
    case 'EPERM':
    case 'ELOOP':
    case 'EROFS':
      return ErrorCode.PermissionDenied;
    case 'EINVAL':
    case 'ENAMETOOLONG':
    case 'ENOTDIR':
      return ErrorCode.InvalidArgument;
    case 'ENOMEM':
    case 'ENOSPC':
    case 'EDQUOT':
      return ErrorCode.OutOfMemory;
    case 'EFBIG':
    case 'EMFILE':
    case 'ENFILE':
      return ErrorCode.ResourceExhausted;
    case 'ENOTSUP':
      return ErrorCode.NotSupported;
    default:
      return ErrorCode.InvalidState;
  }
}
