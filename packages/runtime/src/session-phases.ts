import { type Backend, ErrorCode, HsError, OK_VOID, type Result, err, errWithContext } from '@hs/streams';
import { asHsError, hostWaitOutcome } from './host-wait-outcome.js';
import type { OperatorRunner } from './operator-runner.js';
import type { SessionResources } from './session-resources.js';

/**
 * The phases of a run around the scheduler, as `RunSession.run()` takes them: boundaries started, the
 * operators' lifecycle hooks called, the planned streams checked at the end. Each gives the first
 * failure as a `Result` (named), never rejecting, so `run()` can still drain and give every slot back.
 */

/** Starts every publication and subscription (listen, connect, wait for subscribers); the first failure, named, its code kept. */
export async function startBoundaries(resources: SessionResources): Promise<Result<void>> {
  const started = (start: Promise<void>, what: string): Promise<Result<void>> =>
    start.then(
      () => OK_VOID,
      (thrown: unknown) => errWithContext(asHsError(thrown, ErrorCode.InvalidState, 'start() rejected'), what),
    );
  const starts: Promise<Result<void>>[] = [];
  for (const [id, publication] of resources.publications) starts.push(started(publication.start(), `publication of ${id}`));
  for (const [key, imported] of resources.imports) starts.push(started(imported.subscription.start(), `input ${key} (topic ${imported.topic})`));
  for (const outcome of await Promise.all(starts)) if (!outcome.ok) return outcome;
  return OK_VOID;
}

/**
 * Calls each operator's `start()` or `stop()` in plan order; the first failure named by operator: the
 * error it returned or rejected with (its code kept), `InvalidState` for anything else it threw, and
 * `InvalidState` for a hook whose promise did not settle within `timeoutMs` (the hook is left pending:
 * a promise cannot be cancelled; the later operators' hooks of that phase are not called).
 */
export async function callLifecycle(runners: readonly OperatorRunner[], phase: 'start' | 'stop', timeoutMs: number): Promise<Result<void>> {
  for (const runner of runners) {
    try {
      const returned = await withinTimeout(runner.operator[phase]?.(), timeoutMs);
      if (returned === HOOK_TIMED_OUT) {
        return err(
          ErrorCode.InvalidState,
          `operator ${runner.name}: ${phase}() did not settle within ${timeoutMs} ms (RunOptions.drainTimeoutMs); ` +
            `make it resolve (or reject) once its work is done, or raise drainTimeoutMs`,
        );
      }
      if (returned !== undefined && !returned.ok) return errWithContext(returned.error, `operator ${runner.name}: ${phase}() failed`);
    } catch (thrown) {
      if (thrown instanceof HsError) return errWithContext(thrown, `operator ${runner.name}: ${phase}() failed`);
      const message = thrown instanceof Error ? thrown.message : String(thrown);
      return err(ErrorCode.InvalidState, `operator ${runner.name}: ${phase}() threw: ${message}`, thrown);
    }
  }
  return OK_VOID;
}

/** What `withinTimeout` gives when the hook's promise had not settled in time. */
const HOOK_TIMED_OUT: unique symbol = Symbol('hook timed out');

/** `value` itself when it is not a promise; else the promise raced against a `timeoutMs` timer (cleared when it settles). */
async function withinTimeout<T>(value: T | Promise<T>, timeoutMs: number): Promise<T | typeof HOOK_TIMED_OUT> {
  if (!(value instanceof Promise) || !Number.isFinite(timeoutMs)) return value;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<typeof HOOK_TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(HOOK_TIMED_OUT), timeoutMs);
  });
  try {
    return await Promise.race([value, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Waits for every planned stream once the run has drained and returns the first device fault
 * (`DeviceError`) one of them reported, or null. Event polls cannot carry a fault, so without this a
 * kernel that faulted would go unnoticed.
 */
export async function firstStreamFault(backend: Backend, resources: SessionResources): Promise<Result<never> | null> {
  for (const [id, stream] of resources.streams) {
    const synced = await hostWaitOutcome(backend.synchronizeStream(stream));
    if (!synced.ok) return errWithContext(synced.error, `stream ${id}`);
  }
  return null;
}
