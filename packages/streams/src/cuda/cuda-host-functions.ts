import type { CudaNativeBinding } from '@hs/cuda-native';
import type { Device } from '../device.js';
import { ErrorCode, HsError, OK_VOID, type Result } from '../errors.js';
import type { CudaErrors } from './cuda-errors.js';
import type { CudaEvent, CudaStream } from './cuda-handles.js';
import type { HostCallRegistry } from './host-call-registry.js';

/**
 * Host functions of the CUDA backend: JS closures enqueued in stream order (`cudaLaunchHostFunc` through
 * the addon's thread-safe function), the faults they record on their stream, and the explicit host waits
 * (`synchronizeStream`/`synchronizeEvent`), which settle a promise (resolved, or rejected with an `HsError`)
 * once the stream's work so far completed: through the addon's completion waiter (an event at the stream's
 * end, polled off the JS thread; the stream never stalls on a host function), or, with an older addon or
 * `HS_CUDA_COMPLETION=host-function`, a non-blocking host call at the stream's end. Either way the
 * settlement comes after the host calls enqueued on the stream before it. Nothing here blocks the JS thread.
 */
export class CudaHostFunctions {
  /** Settles a pending wait: `null` resolves it, an error rejects it. */
  private readonly pendingWaits = new Set<(error: HsError | null) => void>();
  /** Per device: idle internal streams used by `waitForEvent`. */
  private readonly idleSyncStreams: bigint[][];
  /** False with `HS_CUDA_COMPLETION=host-function` (or an addon without `notifyWhenDone`): waits are host calls. */
  readonly completionViaEvent: boolean;

  constructor(
    private readonly cuda: CudaNativeBinding,
    private readonly errors: CudaErrors,
    private readonly calls: HostCallRegistry,
    devices: readonly Device[],
    /** False with `hostFunctions: 'queued'`: later work never waits for a host function. */
    readonly blocking: boolean,
    private readonly onFault: ((error: HsError, stream: CudaStream) => void) | undefined,
    private readonly isDisposed: () => boolean,
  ) {
    this.idleSyncStreams = devices.map(() => []);
    this.completionViaEvent = process.env['HS_CUDA_COMPLETION'] !== 'host-function' && cuda.notifyWhenDone !== undefined;
  }

  /**
   * Enqueues `fn` (which must not throw) as a host call on `s`; later work waits for it when `blocking`
   * and host functions are blocking (see `CudaBackendOptions.hostFunctions`).
   */
  launchGated(s: CudaStream, method: string, fn: () => void, blocking = true): Result<void> {
    const status = this.calls.launch(s.handle, fn, this.blocking && blocking);
    return status === 0 ? OK_VOID : this.errors.status(method, status);
  }

  /** Enqueues a user's function: skipped once the backend is disposed; a throw becomes the stream's fault. */
  launchUser(s: CudaStream, method: string, fn: () => void, blocking: boolean): Result<void> {
    return this.launchGated(
      s,
      method,
      () => {
        if (this.isDisposed()) return;
        try {
          fn();
        } catch (cause) {
          this.recordFault(s, cause);
        }
      },
      blocking,
    );
  }

  /** Enqueues `fn` on the native stream `stream` that later work never waits for; returns the CUDA status. */
  launchDetached(stream: bigint, fn: () => void): number {
    return this.calls.launch(stream, fn, false);
  }

  /**
   * Runs `fn` on the JS thread once the work enqueued on `s` so far completed (after the host calls before it),
   * through the completion waiter when there is one; later work never waits for it. Returns the CUDA status.
   */
  whenDone(s: CudaStream, fn: () => void): number {
    return this.calls.notify(s.handle, s.device.id, fn, this.completionViaEvent);
  }

  /** Records the first fault of `s` (a host function that threw) and reports it to `onFault`. */
  recordFault(s: CudaStream, cause: unknown): void {
    const error = new HsError(ErrorCode.DeviceError, `a host function on stream "${s.label}" threw: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    s.fault ??= error;
    this.onFault?.(error, s);
  }

  /**
   * Resolves when everything enqueued on `s` so far completed; rejects with its fault (DeviceError) if a
   * host function threw, with the CUDA error when the wait cannot be enqueued, and with InvalidState when
   * the backend is disposed first.
   */
  waitForStream(s: CudaStream): Promise<void> {
    return this.waitOn(s.handle, s.device.id, 'synchronizeStream', () => s.fault);
  }

  /**
   * Resolves when `e`'s current capture completed, through an idle internal stream that waits on it;
   * rejects like `waitForStream` (the fault is the recording stream's).
   */
  waitForEvent(e: CudaEvent): Promise<void> {
    const recordedOn = e.recordedOn;
    if (recordedOn === null) return Promise.resolve();
    const idle = this.idleSyncStreams[e.device.id] as bigint[];
    let waiter: bigint;
    try {
      waiter = idle.pop() ?? this.cuda.streamCreate(e.device.id, 0);
    } catch (cause) {
      return Promise.reject(this.errors.thrown('synchronizeEvent', cause).error);
    }
    const status = this.cuda.streamWaitEvent(waiter, e.handle);
    if (status !== 0) {
      idle.push(waiter);
      return Promise.reject(this.errors.status('synchronizeEvent', status).error);
    }
    return this.waitOn(waiter, e.device.id, 'synchronizeEvent', () => {
      if (!this.isDisposed()) idle.push(waiter);
      else this.cuda.streamDestroy(waiter);
      return recordedOn.fault;
    });
  }

  /** Rejects every pending wait with InvalidState (the backend is being disposed). */
  settlePendingWaits(): void {
    const gone = new HsError(ErrorCode.InvalidState, 'the CUDA backend was disposed before the awaited work ran');
    const pending = [...this.pendingWaits];
    this.pendingWaits.clear();
    for (const settle of pending) settle(gone);
  }

  /** Destroys the idle internal streams. */
  dispose(): void {
    for (const idle of this.idleSyncStreams) for (const waiter of idle.splice(0)) this.cuda.streamDestroy(waiter);
  }

  /**
   * A promise settled once the work enqueued on `stream` so far completed: resolved, or rejected with
   * `onDone()`'s fault, the enqueue's CUDA error, or InvalidState from `settlePendingWaits`.
   */
  private waitOn(stream: bigint, device: number, method: string, onDone: () => HsError | null): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const settle = (error: HsError | null): void => {
        if (error === null) resolve();
        else reject(error);
      };
      this.pendingWaits.add(settle);
      const status = this.calls.notify(
        stream,
        device,
        () => {
          if (!this.pendingWaits.delete(settle)) return;
          settle(onDone());
        },
        this.completionViaEvent,
      );
      if (status !== 0) {
        this.pendingWaits.delete(settle);
        reject(this.errors.status(method, status).error);
      }
    });
  }
}
