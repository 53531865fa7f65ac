/**
 * Error codes shared by every hs package. Hot-path and contract failures are returned as values
 * (`Result<T>`); programmer errors (wrong argument types) may throw `HsError`.
 *
 * Spec: "Two stream roles order every device tensor", "Exhaustion fails fast" (holoscan-5.0-tensors-in-depth).
 * @example
 * ```ts
 * import { Device, ErrorCode, HostBackend } from '@hs/streams';
 *
 * const backend = new HostBackend(); // one emulated CUDA device, cuda:0
 * const stream = backend.createStream(Device.cuda(3), { label: 'producer' });
 * if (!stream.ok && stream.error.code === ErrorCode.InvalidArgument) {
 *   console.log(`refused (${stream.error.code}): ${stream.error.detail}`);
 * }
 * backend.dispose();
 * ```
 */
export enum ErrorCode {
  /** An argument is out of its documented domain (shape, dtype, size, option). */
  InvalidArgument = 'InvalidArgument',
  /** A bounded resource (pool slot, release-stream cap, queue) is full; nothing waited. */
  ResourceExhausted = 'ResourceExhausted',
  /** Write access was requested on read-only data (a received or imported tensor). */
  PermissionDenied = 'PermissionDenied',
  /** The operation is valid in general but not for this object, stream or backend. */
  NotSupported = 'NotSupported',
  /** A value did not match the declared contract of the port or channel that received it. */
  ProtocolError = 'ProtocolError',
  /** Exact integer arithmetic overflowed (byte spans, slot counts). */
  ArithmeticOverflow = 'ArithmeticOverflow',
  /** The object is in the wrong lifecycle state (disposed, already committed, stream borrowed after return). */
  InvalidState = 'InvalidState',
  /** A named entity (device, operator, port) does not exist. */
  NotFound = 'NotFound',
  /** A name or registration already exists. */
  AlreadyExists = 'AlreadyExists',
  /** The backend or device reported a failure (driver error, a kernel that faulted). */
  DeviceError = 'DeviceError',
  /**
   * An allocation of a valid size could not be satisfied (the device, the host heap or a resource's limit
   * refused it); nothing was allocated. Spec: the resource conformance suite's impossible-size case
   * (nanovdb-memory-resources).
   */
  OutOfMemory = 'OutOfMemory',
  /** The graph or plan failed validation at compile time; see the diagnostics. */
  CompileError = 'CompileError',
  /**
   * A non-blocking emit found a bounded edge full; nothing was published and the caller still owns what
   * it tried to emit (it may keep it and retry later). Not a failure of the run unless returned from it.
   */
  Backpressured = 'Backpressured',
}

/**
 * Typed error carried by `Result` values and thrown for programmer errors.
 * @example
 * ```ts
 * import { ErrorCode, HostBackend, HsError } from '@hs/streams';
 *
 * // Programmer errors (a wrong option) throw an HsError; contract failures come back as Result values.
 * try {
 *   new HostBackend({ deviceCount: 100 }).dispose();
 * } catch (error) {
 *   if (!(error instanceof HsError)) throw error;
 *   console.log(error.name, error.code === ErrorCode.InvalidArgument, error.detail);
 * }
 * ```
 */
export class HsError extends Error {
  /** Always `'HsError'`, so logs and `instanceof`-free checks can tell hs errors apart. */
  override readonly name = 'HsError';
  /** Stable machine-readable code. */
  readonly code: ErrorCode;
  /** The message without the leading code (`message` is `${code}: ${detail}`). */
  readonly detail: string;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(`${code}: ${message}`, options);
    this.code = code;
    this.detail = message;
  }
}

/** A success value. */
export interface Ok<T> {
  /** Discriminant: `true` for a success. */
  readonly ok: true;
  /** The value the call produced. */
  readonly value: T;
}

/** A failure value. */
export interface Err {
  /** Discriminant: `false` for a failure. */
  readonly ok: false;
  /** The typed error: its `code` says what kind of failure, its message what to do. */
  readonly error: HsError;
}

/** Either a value or a typed error; the hot path returns these instead of throwing. */
export type Result<T> = Ok<T> | Err;

/**
 * Shared, frozen success for `Result<void>`: returning it allocates nothing.
 * @example
 * ```ts
 * import { ErrorCode, OK_VOID, err, type Result } from '@hs/streams';
 *
 * // An RGBA8 frame of `width` x `height` pixels holds 4 bytes per pixel.
 * function checkFrameBytes(byteLength: number, width: number, height: number): Result<void> {
 *   const expected = width * height * 4;
 *   if (byteLength !== expected) return err(ErrorCode.InvalidArgument, `a ${width}x${height} RGBA8 frame holds ${expected} bytes, got ${byteLength}`);
 *   return OK_VOID; // the shared frozen success: nothing is allocated per frame
 * }
 *
 * console.log(checkFrameBytes(64, 4, 4) === OK_VOID, checkFrameBytes(63, 4, 4).ok);
 * ```
 */
export const OK_VOID: Ok<void> = Object.freeze({ ok: true as const, value: undefined });

/**
 * Wraps a value in a success.
 * @example
 * ```ts
 * import { ErrorCode, err, ok, type Result } from '@hs/streams';
 *
 * // Bytes of a `width` x `height` RGBA8 frame, refused when it is not a safe integer.
 * function frameBytes(width: number, height: number): Result<number> {
 *   const bytes = width * height * 4;
 *   return Number.isSafeInteger(bytes) && bytes > 0 ? ok(bytes) : err(ErrorCode.ArithmeticOverflow, `${width}x${height} RGBA8 has no exact byte size`);
 * }
 *
 * const bytes = frameBytes(1920, 1080);
 * if (bytes.ok) console.log(`a 1080p RGBA8 frame holds ${bytes.value} bytes`);
 * ```
 */
export function ok<T>(value: T): Ok<T> {
  return { ok: true, value };
}

/**
 * Builds a failure with a new `HsError`.
 * @example
 * ```ts
 * import { ErrorCode, err, ok, type Result } from '@hs/streams';
 *
 * function parseRateHz(text: string): Result<number> {
 *   const hz = Number(text);
 *   if (!Number.isFinite(hz) || hz <= 0) return err(ErrorCode.InvalidArgument, `rate must be a positive number of Hz, got '${text}'`);
 *   return ok(hz);
 * }
 *
 * const rate = parseRateHz('fast');
 * if (!rate.ok) console.log(rate.error.code, '-', rate.error.detail);
 * ```
 */
export function err(code: ErrorCode, message: string, cause?: unknown): Err {
  return { ok: false, error: new HsError(code, message, cause === undefined ? undefined : { cause }) };
}

/**
 * Re-raises `error` with context in front of its detail: same code, message `${code}: ${context}: ${detail}`,
 * and the original as `cause`. Use it when passing a callee's failure up, so codes are not repeated.
 * @example
 * ```ts
 * import { ErrorCode, err, errWithContext, ok, type Result } from '@hs/streams';
 *
 * function parseRateHz(text: string): Result<number> {
 *   const hz = Number(text);
 *   return Number.isFinite(hz) && hz > 0 ? ok(hz) : err(ErrorCode.InvalidArgument, `rate must be a positive number of Hz, got '${text}'`);
 * }
 *
 * function cameraRate(config: Record<string, string>): Result<number> {
 *   const rate = parseRateHz(config['rate'] ?? '');
 *   return rate.ok ? rate : errWithContext(rate.error, "camera 'front'"); // same code, context in front
 * }
 *
 * const rate = cameraRate({ rate: '-30' });
 * if (!rate.ok) console.log(rate.error.message); // InvalidArgument: camera 'front': rate must be ...
 * ```
 */
export function errWithContext(error: HsError, context: string): Err {
  return err(error.code, `${context}: ${error.detail}`, error);
}

/**
 * Returns the value of a success or throws the error of a failure.
 * @throws HsError the failure's error.
 * @example
 * ```ts
 * import { Device, HostBackend, HsError, MemoryKind, unwrap } from '@hs/streams';
 *
 * const backend = new HostBackend();
 * // unwrap returns the value of a success ...
 * const staging = unwrap(backend.allocate({ kind: MemoryKind.PinnedHost, device: Device.cpu(), byteSize: 4096 }));
 * console.log(`allocated ${staging.byteSize} bytes of ${staging.kind}`);
 * // ... and throws the HsError of a failure (here: a size that is not positive).
 * try {
 *   unwrap(backend.allocate({ kind: MemoryKind.PinnedHost, device: Device.cpu(), byteSize: 0 }));
 * } catch (error) {
 *   if (error instanceof HsError) console.log(`thrown: ${error.message}`);
 * }
 * backend.dispose();
 * ```
 */
export function unwrap<T>(result: Result<T>): T {
  if (!result.ok) throw result.error;
  return result.value;
}
