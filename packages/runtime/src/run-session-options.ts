import type { ExecutionPlan, RateParameterValue } from '@hs/compiler';
import { type Backend, ErrorCode, type HostBackendOptions, HsError, type Result, checkOptionFields, err, ok } from '@hs/streams';
import type { BoundaryProvider } from './boundary-provider.js';
import type { PoolResourceBindings } from './pool-resource-bindings.js';
import type { RunMetrics } from './run-metrics.js';
import { MAX_TIMER_MS, type SessionClock, monotonicClock } from './session-clock.js';

/** Options for `RunSession.create`. */
export interface RunSessionOptions {
  /**
   * The backend, or its name; default: `selectBackend()` (explicit option, then `HS_BACKEND`, then
   * auto-detect). A backend passed in stays owned by the caller; one the session selects is disposed with it.
   */
  readonly backend?: Backend | 'host' | 'cuda';
  /** Options for a host backend the session creates. */
  readonly hostOptions?: HostBackendOptions;
  /**
   * Diagnostic mode: ignore the plan's fusion evidence and keep every fence (readiness records,
   * self-waits, release registrations) on every edge, to isolate an ordering problem or measure what
   * the elision saves. Default `false`: proven edges run without those fences.
   * Spec: "When the fences disappear: proven linear chains".
   */
  readonly fullFences?: boolean;
  /**
   * Milliseconds between `'metrics'` events while a run is in progress (default 1000; a positive
   * finite number up to 2^31 - 1, the longest Node timer). The timer only snapshots when a listener is registered, off the hot path.
   */
  readonly metricsIntervalMs?: number;
  /**
   * Times one activation in this many for the latency metrics (`OperatorMetrics.latency*`; a positive
   * whole number, default 1: every activation, two monotonic clock reads' worth per frame of a chain,
   * the scheduler's largest fixed per-activation cost). With N > 1 an operator's every N-th activation
   * is timed (its clock reads are skipped on the others): the mean, percentiles and maximum are then
   * over those samples (the percentiles over the last 1 024 samples), while `activations` still counts
   * every one. Scheduling never reads this clock: clock triggers, `deferUntil()` and temporal contracts
   * follow the session clock exactly as with 1.
   * @example
   * // A high-rate host chain: time 1 activation in 64, so the metrics cost ~1/64 of a clock read per activation.
   * const session = unwrap(RunSession.create(plan, { latencySampleInterval: 64 }));
   */
  readonly latencySampleInterval?: number;
  /**
   * The process-boundary provider (`@hs/ipc`), needed when the plan has external topics
   * (`plan.topics`): it materializes boundary pools in shared memory and feeds subscribed inputs.
   * Imported tensors follow the in-process contract: a device tensor is ordered after the publisher's
   * generation fence on the consumer's stream (no host wait on either side), a host-written one has no
   * fence, and a slot returns to its publisher when the consumer's release stream passed it.
   * Spec: "Crossing process boundaries: the generation fence".
   */
  readonly boundaries?: BoundaryProvider;
  /**
   * The clock the session schedules by: clock triggers tick at t0 + k/rate on it (t0: when `run()`
   * starts scheduling), `deferUntil()` and `ExecutionContext.activationTime` use it. Default: the
   * monotonic clock (`process.hrtime`, Node timers). Inject `ManualClock` to
   * make a test exact. Spec: "Size queue entries from nominal rates".
   * @example
   * import { ManualClock } from '@hs/runtime';
   * const clock = new ManualClock();
   * const session = unwrap(RunSession.create(plan, { clock }));
   * const running = session.run();
   * clock.advanceTo(1_000_000n); // every timer due by t = 1 ms fires, in time order
   */
  readonly clock?: SessionClock;
  /**
   * The scenario whose windows and selectors the operators read by (queues are sized for every
   * scenario; the plan's `schedule` records list each retention's scenario). Default `default`.
   * Spec: "Size queue entries from nominal rates" (mutually exclusive scenarios).
   */
  readonly scenario?: string;
  /**
   * Which resource each graph pool's backing comes from (per provider, per memory kind, a default; see
   * `PoolResourceBindings`), checked at `create()` before anything is allocated. Default: the current
   * device resource for cudaDevice pools, the memory kind's default resource otherwise. A function is
   * called once with the session's backend (the one passed in, or the one the session selected) and
   * returns the bindings: the form to use when the backend is chosen by `HS_BACKEND` or auto-detection
   * and the resources must be made on it.
   * Spec: "Sized cold, borrowed hot".
   */
  readonly resources?: PoolResourceBindings | ((backend: Backend) => PoolResourceBindings);
  /**
   * The session's first rate candidate: values for runtime rate parameters, each
   * `{ parameter: 'op.params.field', rate: Rate }` (a `Rate` in hertz, e.g. `Rate.hz(120)`); parameters it
   * does not name keep the plan's values. `create()` evaluates it exactly as `updateRateParameters()`
   * evaluates a later candidate (each value within its field's admitted domain, every active depth within
   * its edge's admitted depth). Accepted, it is the published generation 0. Rejected (`InvalidArgument`,
   * `NotFound` or `ResourceExhausted`), the session is still created, nothing published:
   * `captureRateGenerations()` has `published: null` and the rejection in `lastRejected`, and `run()`
   * rejects with `InvalidState` naming the parameters and why until `updateRateParameters()` publishes an
   * admissible candidate. Default: the plan's values are generation 0. Not an array of
   * `{ parameter: string, rate }`: `create()` returns `InvalidArgument` before anything is allocated.
   * Spec: "Size queue entries from nominal rates" (the first lifecycle candidate).
   * @example
   * const session = unwrap(RunSession.create(plan, { rateParameters: [{ parameter: 'camera.params.frameRate', rate: Rate.hz(120) }] }));
   * const { published, lastRejected } = session.captureRateGenerations();
   * if (published === null) console.error(`rejected: ${lastRejected!.reason}`);
   */
  readonly rateParameters?: readonly RateParameterValue[];
}

/** Events of a `RunSession`. */
export interface RunSessionEvents {
  /**
   * A metrics snapshot, every `metricsIntervalMs` during a run and once when it ended (after the
   * slots came back). A listener that throws does not crash the process: the error is caught, the run
   * is stopped (drained, every slot returned) and `run()` rejects with `InvalidState` naming the listener's error.
   */
  metrics: (metrics: RunMetrics) => void;
}

/** Options for `RunSession.run`. */
export interface RunOptions {
  /** Aborting stops the session as `stop()` does: sources end, the graph drains, every slot returns. */
  readonly signal?: AbortSignal;
  /**
   * How long, in milliseconds, each operator's `start()` and `stop()` may take to settle, the graph gets
   * to drain after `stop()` (or an abort), and the end of a run waits for every pool slot to come back
   * after the operators' `stop()` (default 10 000 each). Past any bound `run()` rejects with
   * `InvalidState` naming what was stuck (the operator and hook, or the operators still active). A
   * `compute()` that never settles is reported at the drain bound: the run does not then wait for its
   * slots a second time.
   */
  readonly drainTimeoutMs?: number;
}

/** A numeric option's value for a message: a number as it prints, anything else with its type (`"64" (a string)`). @internal */
export function optionValue(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return `${JSON.stringify(value)} (a string)`;
  return `${typeof value === 'symbol' ? value.toString() : String(value as string)} (${value === null ? 'null' : `a ${typeof value}`})`;
}

/** Every field of `RunSessionOptions`. */
const RUN_SESSION_OPTION_FIELDS = [
  'backend',
  'hostOptions',
  'fullFences',
  'metricsIntervalMs',
  'latencySampleInterval',
  'boundaries',
  'clock',
  'scenario',
  'resources',
  'rateParameters',
];

/** Every field of `RunOptions`. */
const RUN_OPTION_FIELDS = ['signal', 'drainTimeoutMs'];

/** Default `RunOptions.drainTimeoutMs`. */
const DEFAULT_DRAIN_TIMEOUT_MS = 10_000;

/** Default `RunSessionOptions.metricsIntervalMs`. */
const DEFAULT_METRICS_INTERVAL_MS = 1000;

/** The session's scalar settings after `checkSessionScalars`, defaults applied. @internal */
export interface SessionScalars {
  readonly metricsIntervalMs: number;
  readonly latencySampleInterval: number;
  readonly clock: SessionClock;
}

/**
 * Checks `RunSession.create`'s option fields (a misspelt one is refused, not ignored), that `backend` is a Backend or a
 * name, and its scalar settings.
 * @returns them with defaults applied, or InvalidArgument naming the unknown field or the bad value. @internal
 */
export function checkSessionScalars(options: RunSessionOptions): Result<SessionScalars> {
  const fields = checkOptionFields('RunSession.create', options, RUN_SESSION_OPTION_FIELDS);
  if (!fields.ok) return fields;
  const { backend } = options;
  if (backend === null || (backend !== undefined && typeof backend !== 'string' && typeof backend !== 'object')) {
    return err(ErrorCode.InvalidArgument, `RunSessionOptions.backend must be a Backend, 'host' or 'cuda', not ${backend === null ? 'null' : `a ${typeof backend}`}`);
  }
  const metricsIntervalMs = options.metricsIntervalMs ?? DEFAULT_METRICS_INTERVAL_MS;
  if (typeof metricsIntervalMs !== 'number' || !Number.isFinite(metricsIntervalMs) || metricsIntervalMs <= 0 || metricsIntervalMs > MAX_TIMER_MS) {
    return err(ErrorCode.InvalidArgument, `metricsIntervalMs ${optionValue(metricsIntervalMs)} is not a positive finite number of milliseconds up to ${MAX_TIMER_MS} (the longest Node timer)`);
  }
  const latencySampleInterval = options.latencySampleInterval ?? 1;
  if (!Number.isSafeInteger(latencySampleInterval) || latencySampleInterval < 1) {
    return err(ErrorCode.InvalidArgument, `latencySampleInterval ${optionValue(latencySampleInterval)} is not a positive whole number of activations (1: time every activation)`);
  }
  const clock = options.clock ?? monotonicClock;
  if (typeof clock !== 'object' || clock === null || typeof clock.now !== 'function' || typeof clock.setTimer !== 'function' || typeof clock.clearTimer !== 'function') {
    return err(ErrorCode.InvalidArgument, 'RunSessionOptions.clock needs now(), setTimer(atNs, callback) and clearTimer(timer) (a SessionClock)');
  }
  return ok({ metricsIntervalMs, latencySampleInterval, clock });
}

/**
 * Checks `RunSession.run`'s options before the session starts (a misspelt field is refused, not ignored).
 * @returns the drain bound in milliseconds, default applied, or InvalidArgument naming what is wrong: options that
 *   are not an object, an unknown field, a `signal` that is not an AbortSignal, a `drainTimeoutMs` that is not a
 *   finite number from 0 to the longest Node timer. @internal
 */
export function checkRunOptions(options: RunOptions): Result<number> {
  const who = 'RunSession.run';
  const fields = checkOptionFields(who, options, RUN_OPTION_FIELDS);
  if (!fields.ok) return fields;
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) {
    return err(ErrorCode.InvalidArgument, `${who}: signal ${optionValue(options.signal)} is not an AbortSignal`);
  }
  const drainTimeoutMs = options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
  if (typeof drainTimeoutMs !== 'number' || !Number.isFinite(drainTimeoutMs) || drainTimeoutMs < 0 || drainTimeoutMs > MAX_TIMER_MS) {
    return err(ErrorCode.InvalidArgument, `${who}: drainTimeoutMs ${optionValue(drainTimeoutMs)} is not a finite number of milliseconds from 0 to ${MAX_TIMER_MS} (the longest Node timer)`);
  }
  return ok(drainTimeoutMs);
}

/** Whether `candidate` has the shape of rate parameter values: an array of `{ parameter: string, rate }`. @internal */
export function isRateCandidate(candidate: unknown): candidate is readonly RateParameterValue[] {
  return Array.isArray(candidate) && candidate.every((v: unknown) => typeof v === 'object' && v !== null && typeof (v as RateParameterValue).parameter === 'string');
}

/** Throws the InvalidArgument for a `plan` that is not an ExecutionPlan (such as the `compile()` Result passed as it is). @internal */
export function checkPlanArgument(plan: unknown): void {
  if (Array.isArray((plan as Partial<ExecutionPlan> | null)?.operators)) return;
  const given = plan === null ? 'null' : typeof plan === 'object' ? 'an object without operators' : `a ${typeof plan}`;
  throw new HsError(ErrorCode.InvalidArgument, `RunSession.create: plan must be the ExecutionPlan compile() gives (unwrap its Result), not ${given}`);
}
