import { ErrorCode, err, ok, type Result } from '@hs/streams';

/**
 * How the reader of a topic mailbox waits for the next frame once it drained every frame that had arrived.
 *
 * - `{ kind: 'park' }` (the default): it sleeps on its doorbell at once. The writer then rings the doorbell
 *   for the next frame: no CPU is spent while idle, but every frame after a pause pays one kernel wake-up
 *   of the reader's event loop.
 * - `{ kind: 'spin', spinMicroseconds }`: after each drained batch it keeps looking at the ring once per
 *   turn of its event loop (`setImmediate`, never a blocking loop: timers, sockets and other callbacks go
 *   on running) for `spinMicroseconds`, and only then sleeps on the doorbell. A frame that arrives within
 *   the window is taken without any wake-up or system call on either side, at the price of one core kept
 *   busy by the reader's process during the window. Worth it on a machine with cores to spare when frames
 *   follow each other closely; on a loaded machine the spinning reader competes with the writer for CPU
 *   and latency gets worse, not better.
 *
 * `ChannelRuntimeOptions.wait`, `TopicPublisherOptions.wait` (the release rings of its subscribers) and
 * `IpcBoundariesOptions.wait` (subscribed graph inputs) take it; `resolveMailboxWait` checks one.
 */
export type MailboxWait =
  | {
      /** Sleep on the doorbell as soon as the ring is empty (the default). */
      readonly kind: 'park';
    }
  | {
      /** Poll the ring once per event-loop turn for a window after each drained batch, then sleep. */
      readonly kind: 'spin';
      /** The window, in microseconds: a finite number in 0..10 000 (0 parks at once). */
      readonly spinMicroseconds: number;
    };

/** The longest spin window a `MailboxWait` may ask for, in microseconds (10 ms). */
export const MAX_SPIN_MICROSECONDS = 10_000;

/** The default wait: sleep on the doorbell as soon as the ring is empty. @internal */
export const PARK: MailboxWait = Object.freeze({ kind: 'park' });

/**
 * Checks a `MailboxWait` option: `undefined` is the default (`{ kind: 'park' }`); a spin window must be a
 * finite number of microseconds in 0..`MAX_SPIN_MICROSECONDS` (0 behaves as parking). Returns a frozen copy,
 * or `InvalidArgument` naming `who` and what is wrong.
 *
 * @example
 * ```ts
 * import { ErrorCode, unwrap } from '@hs/streams';
 * import { resolveMailboxWait } from '@hs/ipc';
 *
 * console.log(unwrap(resolveMailboxWait(undefined, 'example'))); // { kind: 'park' }
 * const spin = unwrap(resolveMailboxWait({ kind: 'spin', spinMicroseconds: 100 }, 'example'));
 * console.log(spin.kind); // spin
 * const tooLong = resolveMailboxWait({ kind: 'spin', spinMicroseconds: 1e6 }, 'example');
 * if (!tooLong.ok && tooLong.error.code === ErrorCode.InvalidArgument) console.log(tooLong.error.detail);
 * ```
 */
export function resolveMailboxWait(option: MailboxWait | undefined, who: string): Result<MailboxWait> {
  if (option === undefined) return ok(PARK);
  if (typeof option !== 'object' || option === null) {
    return err(ErrorCode.InvalidArgument, `${who}: wait must be { kind: 'park' } or { kind: 'spin', spinMicroseconds }, got ${String(option)}`);
  }
  if (option.kind === 'park') return ok(PARK);
  if (option.kind !== 'spin') {
    return err(ErrorCode.InvalidArgument, `${who}: wait.kind must be 'park' or 'spin', got ${JSON.stringify((option as { kind?: unknown }).kind)}`);
  }
  const spinMicroseconds: unknown = option.spinMicroseconds;
  if (typeof spinMicroseconds !== 'number' || !Number.isFinite(spinMicroseconds) || spinMicroseconds < 0 || spinMicroseconds > MAX_SPIN_MICROSECONDS) {
    return err(ErrorCode.InvalidArgument, `${who}: wait.spinMicroseconds must be a finite number of microseconds in 0..${MAX_SPIN_MICROSECONDS}, got ${typeof spinMicroseconds === 'string' ? `${JSON.stringify(spinMicroseconds)} (a string)` : String(spinMicroseconds)}`);
  }
  return ok(Object.freeze({ kind: 'spin', spinMicroseconds }));
}

/**
 * What a spinning reader polls with: the clock (ms) and a once-per-turn scheduler. The default is
 * `performance.now` and `setImmediate`; tests inject their own to count polls without timing anything.
 * @internal
 */
export interface SpinScheduler {
  now(): number;
  schedule(poll: () => void): unknown;
  cancel(handle: unknown): void;
}

/** `performance.now` and `setImmediate`/`clearImmediate`. @internal */
export const IMMEDIATE_SCHEDULER: SpinScheduler = {
  now: () => performance.now(),
  schedule: (poll) => setImmediate(poll),
  cancel: (handle) => clearImmediate(handle as NodeJS.Immediate),
};
