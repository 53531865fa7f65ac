import {
  DEFAULT_SCENARIO,
  type ExecutionPlan,
  type Rate,
  type RateGeneration,
  type RateGenerationSnapshot,
  type RateParameterValue,
  type RejectedRateGeneration,
  evaluateRateGeneration,
  generationZeroRates,
} from '@hs/compiler';
import { type Backend, type Result, ErrorCode, HsError, err, leakTracker, ok, selectBackend, unwrap } from '@hs/streams';
import { EventEmitter } from 'node:events';
import type { Channel } from './channel.js';
import { MAX_TAP_QUEUE_DEPTH, type OutputTap, TapChannel, TapIterator, type TapOptions } from './output-tap.js';
import type { InputRequirement } from './input-binding.js';
import type { OperatorRunner } from './operator-runner.js';
import type { RunMetrics } from './run-metrics.js';
import { provenFusedEdges } from './fusion-evidence.js';
import { RateViews } from './rate-views.js';
import { ownedRateGeneration, rejectedRateGeneration } from './rate-evidence.js';
import { Scheduler } from './scheduler.js';
import type { SessionClock } from './session-clock.js';
import { type RunOptions, type RunSessionEvents, type RunSessionOptions, checkPlanArgument, checkRunOptions, checkSessionScalars, isRateCandidate } from './run-session-options.js';
import { callLifecycle, firstStreamFault, startBoundaries } from './session-phases.js';
import { inputReads } from './scenario-input-reads.js';
import { SessionResources } from './session-resources.js';
import { wireRunners } from './session-runners.js';
import type { PoolResourceBindings } from './pool-resource-bindings.js';

const DEFAULT_TAP_DEPTH = 2;

type SessionState = 'ready' | 'running' | 'stopped' | 'disposed';

/**
 * The most operators one `RunSession` takes; `create()` refuses a larger plan with ResourceExhausted. Creation
 * is linear in the plan's size (about 0.1 ms and 10 KiB per chained operator on the host backend, see `pnpm
 * bench`); the bound keeps one session's metrics and scheduler sweep within what a JS thread turns over.
 * @example
 * ```ts
 * import { Graph, compile } from '@hs/compiler';
 * import { MAX_SESSION_OPERATORS, RunSession } from '@hs/runtime';
 *
 * const plan = compile(new Graph('empty'));
 * if (!plan.ok) throw plan.error;
 * const operators = plan.value.operators.length;
 * console.log(`${operators} operators; a plan above ${MAX_SESSION_OPERATORS} is refused with ResourceExhausted`);
 * const session = RunSession.create(plan.value, { backend: 'host' });
 * if (session.ok) session.value.dispose();
 * ```
 */
export const MAX_SESSION_OPERATORS = 100_000;

/** Sessions collected without `dispose()` are reported (their pools and streams stay with the backend until it is disposed). */
const sessionLeaks = leakTracker('RunSession');

/**
 * Runs an `ExecutionPlan`. `create()` materializes every stream, pool and channel before the graph is
 * armed (a failure leaves nothing behind); `run()` schedules `compute()` on the JS thread with bounded
 * queues and backpressure; `stop()` drains and returns every slot; `dispose()` releases everything.
 * Spec: "Sized cold, borrowed hot", "Two stream roles order every device tensor".
 * @example
 * ```ts
 * import { Readable, Writable } from 'node:stream';
 * import { Graph, compile } from '@hs/compiler';
 * import { ReadableSource, RunSession, WritableSink } from '@hs/runtime';
 *
 * const graph = new Graph('copy');
 * const source = graph.add(new ReadableSource('in', Readable.from([1, 2, 3].map((n) => new Uint8Array(256).fill(n))), { maxFrameBytes: 256 }));
 * const received: number[] = [];
 * const sink = graph.add(new WritableSink('out', new Writable({ objectMode: true, write(chunk: Uint8Array, _enc, done) { received.push(chunk[0] ?? -1); done(); } })));
 * graph.addFlow(source.frames, sink.input, { queueDepth: 2 });
 *
 * const plan = compile(graph);
 * if (!plan.ok) throw plan.error; // CompileError: every diagnostic and what to do
 * const session = RunSession.create(plan.value, { backend: 'host' });
 * if (!session.ok) throw session.error;
 * try {
 *   const metrics = await session.value.run({ signal: AbortSignal.timeout(10_000) }); // rejects with an HsError
 *   console.log(`frames ${received.join(',')}; sink activations ${metrics.operators.find((o) => o.name === 'out')?.activations}`);
 * } finally {
 *   session.value.dispose();
 * }
 * ```
 */
export class RunSession {
  private state: SessionState = 'ready';
  private scheduler: Scheduler | null = null;
  private running: Promise<Result<RunMetrics>> | null = null;
  private startedAt = 0;
  private endedAt = 0;
  private published: RateGeneration | null = null;
  private lastRejected: RejectedRateGeneration | null = null;
  private nextGeneration = 1;
  private rateValues: Map<string, Rate>;
  private readonly events = new EventEmitter();
  private readonly taps: TapIterator[] = [];
  private listenerFailure: unknown = null;

  private constructor(
    /** The plan this session runs. */
    readonly plan: ExecutionPlan,
    /** The backend device work goes to. */
    readonly backend: Backend,
    private readonly ownsBackend: boolean,
    private readonly resources: SessionResources,
    private readonly runners: readonly OperatorRunner[],
    private readonly producerOf: ReadonlyMap<Channel, OperatorRunner>,
    private readonly rateViews: RateViews,
    private readonly metricsIntervalMs: number,
    /** Where boundary callbacks find the running scheduler to wake. */
    private readonly wakeHook: { scheduler: Scheduler | null },
    private readonly clock: SessionClock,
    firstCandidate: readonly RateParameterValue[],
  ) {
    this.rateValues = generationZeroRates(plan);
    this.propose(0, firstCandidate);
    sessionLeaks.track(this, { label: `plan ${plan.name}` }, this.leakToken);
  }

  /** Unregisters the session from the leak report at `dispose()`. */
  private readonly leakToken = {};

  /**
   * Materializes the plan on a backend.
   * @returns the session, or the backend selection error, or the first stream/pool that could not be
   *   materialized (`DeviceError`, `ResourceExhausted`, `InvalidArgument`), with nothing left allocated;
   *   `InvalidArgument` for a field that is not an option (a misspelt one, naming the closest), a `metricsIntervalMs` that is not a positive finite number up to 2^31 - 1, a
   *   `latencySampleInterval` that is not a positive whole number, a `clock` without
   *   `now`/`setTimer`/`clearTimer`, a `scenario` no contract of the plan names, or an input with both a
   *   window and a selector in the scenario (named by operator and port); `NotSupported` for a plan with
   *   external topics and no `boundaries` provider; the provider's errors; the pool bindings' errors
   *   (`resources`: a provider the plan does not have, a resource of the wrong kind, device, backend or
   *   tier, naming the pool, checked before anything is allocated); `InvalidArgument` for `rateParameters`
   *   that is not an array of `{ parameter: string, rate }`. A `rateParameters` candidate the plan does not
   *   admit still creates the session, with no generation published (see `RunSessionOptions.rateParameters`);
   *   `ResourceExhausted` for a plan of more than `MAX_SESSION_OPERATORS` operators (before anything is made).
   *   Creation time and memory grow linearly with the plan's operators, edges and pools.
   * @throws HsError InvalidArgument when `plan` is not an ExecutionPlan (a `compile()` Result passed as it is) or
   *   `resources` holds something that is not a resource; what a
   *   `resources` function throws (a backend the session selected is disposed first).
   */
  static create(plan: ExecutionPlan, options: RunSessionOptions = {}): Result<RunSession> {
    checkPlanArgument(plan);
    if (plan.operators.length > MAX_SESSION_OPERATORS) {
      return err(
        ErrorCode.ResourceExhausted,
        `plan ${plan.name} has ${plan.operators.length} operators, more than the ${MAX_SESSION_OPERATORS} one session runs (MAX_SESSION_OPERATORS); split the graph across sessions joined by topics`,
      );
    }
    const scalars = checkSessionScalars(options);
    if (!scalars.ok) return scalars;
    const { metricsIntervalMs, latencySampleInterval, clock } = scalars.value;
    const firstCandidate: unknown = options.rateParameters ?? [];
    if (!isRateCandidate(firstCandidate)) {
      return err(ErrorCode.InvalidArgument, 'RunSessionOptions.rateParameters must be an array of { parameter: "op.params.field", rate: Rate }');
    }
    const scenario = options.scenario ?? DEFAULT_SCENARIO;
    const reads = inputReads(plan, scenario);
    if (!reads.ok) return reads;
    const given = options.backend;
    const ownsBackend = given === undefined || typeof given === 'string';
    let backend: Backend;
    if (given !== undefined && typeof given !== 'string') {
      backend = given;
    } else {
      const selected = selectBackend({ backend: given, hostOptions: options.hostOptions });
      if (!selected.ok) return selected;
      backend = selected.value;
    }
    const wakeHook: { scheduler: Scheduler | null } = { scheduler: null };
    let bindings: PoolResourceBindings | undefined;
    try {
      bindings = typeof options.resources === 'function' ? options.resources(backend) : options.resources;
    } catch (thrown) {
      if (ownsBackend) backend.dispose();
      throw thrown;
    }
    const materialized = SessionResources.materialize(plan, backend, {
      boundaries: options.boundaries ?? null,
      resources: bindings,
      wake: () => wakeHook.scheduler?.wake(),
    });
    if (!materialized.ok) {
      if (ownsBackend) backend.dispose();
      return materialized;
    }
    const resources = materialized.value;
    const rateViews = new RateViews(plan);
    const fused = options.fullFences === true ? new Set<string>() : provenFusedEdges(plan);
    const { runners, producerOf } = wireRunners({ plan, backend, resources, reads: reads.value, fused, rateViews, scenario, latencySampleInterval });
    return ok(new RunSession(plan, backend, ownsBackend, resources, runners, producerOf, rateViews, metricsIntervalMs, wakeHook, clock, firstCandidate));
  }

  /**
   * Proposes new values for runtime rate parameters (`op.params.field`). The candidate is validated
   * against the plan's admitted domains and capacities; when valid it is published as the next rate
   * generation (new active queue depths and `ctx.rate()` values; nothing is reallocated), otherwise it
   * becomes the last rejected generation and the published one stays in force. Cold: call it between
   * activations, not from the hot path.
   * This is also how a session whose first candidate (`RunSessionOptions.rateParameters`) was rejected
   * gets a generation to run with.
   * @returns the published generation (deep-frozen); `InvalidArgument`/`NotFound`/`ResourceExhausted` for a
   *   rejected candidate; `InvalidArgument` for a candidate that is not an array of `{ parameter: string, rate }`
   *   (nothing recorded); `InvalidState` after dispose().
   */
  updateRateParameters(candidate: readonly RateParameterValue[]): Result<RateGeneration> {
    if (this.state === 'disposed') return err(ErrorCode.InvalidState, 'session is disposed');
    if (!isRateCandidate(candidate)) {
      return err(ErrorCode.InvalidArgument, 'updateRateParameters: the candidate must be an array of { parameter: "op.params.field", rate: Rate }');
    }
    return this.propose(this.nextGeneration++, candidate);
  }

  /**
   * The published rate generation and the last rejected candidate, each `null` when there is none
   * (`published` is `null` while a rejected first candidate left nothing in force). Owning and
   * deep-frozen: later candidates do not change a snapshot already captured, and it cannot be mutated.
   */
  captureRateGenerations(): RateGenerationSnapshot {
    return Object.freeze({ published: this.published, lastRejected: this.lastRejected });
  }

  /**
   * Evaluates `candidate` as generation `rateGeneration` over the values in force and publishes it (new
   * active depths and port rates), or records it as the last rejected one. Cold.
   */
  private propose(rateGeneration: number, candidate: readonly RateParameterValue[]): Result<RateGeneration> {
    const evaluated = evaluateRateGeneration(this.plan, rateGeneration, this.rateValues, candidate);
    if (!evaluated.ok) {
      this.lastRejected = rejectedRateGeneration(rateGeneration, candidate, evaluated.error);
      return evaluated;
    }
    const generation = ownedRateGeneration(evaluated.value);
    for (const p of generation.parameters) this.rateValues.set(p.parameter, p.rate);
    for (const edge of generation.edges) {
      const channel = this.resources.channels.get(edge.edge);
      if (channel !== undefined) channel.activeDepth = edge.activeDepth;
    }
    this.rateViews.publish(generation);
    this.published = generation;
    return ok(generation);
  }

  /**
   * Arms the graph and runs it until every source has finished and the graph has drained (or `stop()`).
   * Calls each operator's `start()` first and `stop()` last. A failed run still drains and gives every
   * slot back before the promise rejects.
   *
   * ```ts
   * try {
   *   const metrics = await session.run({ signal: AbortSignal.timeout(10_000) });
   *   console.log(formatMetrics(metrics));
   * } catch (error) {
   *   console.error(`run failed: ${(error as HsError).code}: ${(error as HsError).message}`);
   *   process.exitCode = 1;
   * }
   * ```
   * @returns the run's metrics.
   * @throws HsError (the promise rejects) with the first failure, its message naming the operator: the
   *   code an operator's `compute()`, `start()` or `stop()` returned or rejected with (`InvalidState` when
   *   one threw something other than an `HsError`; `ProtocolError` for a `compute()` that returned a value
   *   that is not a `Result`); `InvalidState` when the session already ran or was disposed, when a
   *   `'metrics'` listener threw, or when slots did not come back within `drainTimeoutMs`; `InvalidState`
   *   naming the rejected parameters and why when no rate generation is published (the first candidate,
   *   `RunSessionOptions.rateParameters`, was rejected; publish one with `updateRateParameters()`); `DeviceError`
   *   when a planned stream faulted; a boundary's start error (`NotFound`, `ProtocolError`, ...); `InvalidArgument`
   *   for `options` that are not an object, a field that is not an option, a `signal` that is not an AbortSignal or a
   *   `drainTimeoutMs` that is not a finite number from 0 to 2^31 - 1 (nothing ran; the session can still run).
   */
  run(options: RunOptions = {}): Promise<RunMetrics> {
    if (this.state !== 'ready') {
      return Promise.reject(new HsError(ErrorCode.InvalidState, `session is ${this.state}; a session runs once — create a new one`));
    }
    if (this.published === null) return Promise.reject(this.unpublished());
    const checked = checkRunOptions(options);
    if (!checked.ok) return Promise.reject(checked.error);
    const drainTimeoutMs = checked.value;
    this.state = 'running';
    for (const runner of this.runners) runner.latency.reserve();
    const scheduler = new Scheduler(this.clock, this.runners, this.resources, this.producerOf, drainTimeoutMs);
    this.scheduler = scheduler;
    this.wakeHook.scheduler = scheduler;
    const onAbort = (): void => scheduler.requestStop();
    if (options.signal?.aborted === true) scheduler.requestStop();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    this.startedAt = performance.now();
    const ticker = setInterval(this.tick, this.metricsIntervalMs);
    ticker.unref();
    this.running = (async (): Promise<Result<RunMetrics>> => {
      const attached = await startBoundaries(this.resources);
      const started = attached.ok ? await callLifecycle(this.runners, 'start', drainTimeoutMs) : attached;
      const outcome = started.ok ? await scheduler.run() : started;
      // Taps: after a failure nobody will read on, so give their entries back; else let loops drain.
      for (const tap of this.taps) {
        if (outcome.ok) tap.end();
        else tap.close();
      }
      const stopped = await callLifecycle(this.runners, 'stop', drainTimeoutMs);
      // An abandoned graph already spent the bound: an activation that never settled still holds its
      // slots, so take back what has returned and report at once rather than wait the bound again.
      const drained = await scheduler.drainSlots(scheduler.abandoned ? 0 : drainTimeoutMs);
      // Subscribers see the end of each topic only once every slot came back (or was reclaimed).
      await Promise.all([...this.resources.publications.values()].map((p) => p.finish()));
      this.wakeHook.scheduler = null;
      options.signal?.removeEventListener('abort', onAbort);
      clearInterval(ticker);
      this.endedAt = performance.now();
      this.state = 'stopped';
      this.tick();
      if (!outcome.ok) return outcome;
      if (this.listenerFailure !== null) {
        const thrown = this.listenerFailure;
        return err(ErrorCode.InvalidState, `a 'metrics' listener threw: ${thrown instanceof Error ? thrown.message : String(thrown)}; the run was stopped`, thrown);
      }
      if (!stopped.ok) return stopped;
      if (!drained) {
        return err(
          ErrorCode.InvalidState,
          `the run ended but slots did not come back within ${drainTimeoutMs} ms (${this.resources.describeOutstanding()}); ` +
            'an operator kept a lease past its stop(), or device work behind a release event never completed',
        );
      }
      const faulted = await firstStreamFault(this.backend, this.resources);
      if (faulted !== null) return faulted;
      return ok(this.metrics());
    })();
    return this.running.then((outcome) => unwrap(outcome));
  }

  /**
   * Why `run()` refuses a session with no published rate generation, naming the last rejected candidate
   * (there is one: `create()` publishes its first candidate or records it as rejected).
   */
  private unpublished(): HsError {
    const rejected = this.lastRejected!;
    const values = rejected.parameters.length === 0 ? "the plan's own rate values" : rejected.parameters.map((p) => `${p.parameter} = ${String(p.rate)}`).join(', ');
    return new HsError(
      ErrorCode.InvalidState,
      `no rate generation is published: candidate ${rejected.rateGeneration} (${values}) was rejected (${rejected.code}: ${rejected.reason}); ` +
        'publish an admissible candidate with session.updateRateParameters() before run()',
    );
  }

  /**
   * A session-side consumer of `operator`'s output `port`, read with `for await`; call before `run()`.
   * It is one more consumer of that output with a `block` queue of `options.queueDepth` entries (so a
   * slow loop slows the producer); each tensor is waited for on the host before it is yielded and stays
   * valid until the next iteration. A tap nobody reads applies backpressure like any full `block` queue:
   * its producer stops, and the run does not finish until the tap is read, left (`break`), or the run is
   * stopped (`stop()`, an abort). Only once the sources have finished or `stop()` was called does
   * `drainTimeoutMs` bound the wait for the tap's queued entries (past it `run()` rejects with `InvalidState`).
   * Leaving the loop returns every slot it held and detaches it; after the run, the loop ends once the
   * queue drained. One loop per tap: a concurrent second `next()` rejects with HsError `InvalidState`.
   * @returns the tap; `InvalidState` once the session ran; `NotFound` for an unknown operator or output;
   *   `InvalidArgument` for a queue depth that is not an integer in 1..`MAX_TAP_QUEUE_DEPTH`. Both are
   *   checked before the queue is allocated.
   * Spec: "Host access".
   */
  tap(operator: string, port: string, options: TapOptions = {}): Result<OutputTap> {
    if (this.state !== 'ready') return err(ErrorCode.InvalidState, `session is ${this.state}; attach taps before run()`);
    // Everything is checked before the queue is allocated: a huge depth must not reach the allocator.
    const depth = options.queueDepth ?? DEFAULT_TAP_DEPTH;
    if (typeof depth !== 'number' || !Number.isSafeInteger(depth) || depth < 1 || depth > MAX_TAP_QUEUE_DEPTH) {
      return err(
        ErrorCode.InvalidArgument,
        `tap ${String(operator)}.${String(port)}: queueDepth ${String(depth)} is not an integer of entries in 1..${MAX_TAP_QUEUE_DEPTH}`,
      );
    }
    const runner = this.runners.find((r) => r.name === operator);
    if (runner === undefined || this.plan.operator(operator)?.outputs.some((o) => o.name === port) !== true) {
      return err(ErrorCode.NotFound, `tap: the plan has no output ${String(operator)}.${String(port)}; name an operator output of the plan`);
    }
    const channel = new TapChannel(`${operator}.${port}->tap`, depth);
    runner.attachTap(port, channel);
    const tap = new TapIterator(channel, this.backend);
    this.taps.push(tap);
    return ok(tap);
  }

  /**
   * Subscribes to session events (`'metrics'`: see `RunSessionEvents`); returns the session.
   * Listeners run on the JS thread between activations. A listener that throws stops the run, which then
   * rejects with `InvalidState` naming the listener's error (nothing reaches `uncaughtException`).
   * @throws HsError `InvalidArgument` for an event other than `'metrics'` or a listener that is not a function.
   */
  on<E extends keyof RunSessionEvents>(event: E, listener: RunSessionEvents[E]): this {
    if ((event as string) !== 'metrics') {
      throw new HsError(ErrorCode.InvalidArgument, `RunSession.on: unknown event ${JSON.stringify(String(event))}; the session emits 'metrics'`);
    }
    if (typeof listener !== 'function') {
      throw new HsError(ErrorCode.InvalidArgument, `RunSession.on('${event}'): the listener must be a function`);
    }
    this.events.on(event, listener);
    return this;
  }

  /** Removes a listener added with `on()`; returns the session. */
  off<E extends keyof RunSessionEvents>(event: E, listener: RunSessionEvents[E]): this {
    this.events.off(event, listener);
    return this;
  }

  /**
   * Emits a metrics snapshot when someone listens (the snapshot allocates; nothing does otherwise). A
   * listener's throw is kept for `run()`'s result and stops the run; it never escapes from the timer.
   */
  private readonly tick = (): void => {
    if (this.events.listenerCount('metrics') === 0) return;
    try {
      this.events.emit('metrics', this.metrics());
    } catch (thrown) {
      this.listenerFailure ??= thrown;
      if (this.state === 'running') this.scheduler?.requestStop();
    }
  };

  /**
   * Stops sources, lets the graph drain and every slot return, and resolves when the run has ended.
   * @returns nothing, once the run ended; it never rejects: a run that failed rejects `run()`'s promise
   *   (so a signal handler calling `stop()` cannot raise an unhandled rejection).
   */
  async stop(): Promise<void> {
    if (this.state !== 'running') return;
    this.scheduler?.requestStop();
    await this.running;
  }

  /**
   * A snapshot of frames, per-operator latency, pool and queue high-water marks, and per published
   * topic its subscribers and the ones dropped (with the typed error of the latest drop).
   */
  metrics(): RunMetrics {
    const end = this.state === 'running' ? performance.now() : this.endedAt;
    return {
      frames: this.runners.reduce((sum, r) => sum + (r.isSource ? r.emitted : 0), 0),
      elapsedMs: this.startedAt === 0 ? 0 : end - this.startedAt,
      operators: this.runners.map((r) => ({
        name: r.name,
        activations: r.activations,
        emitted: r.emitted,
        retries: r.retries,
        skippedTicks: r.clock?.skipped ?? 0,
        latencyMeanMs: r.latency.count === 0 ? 0 : r.latency.totalMs / r.latency.count,
        latencyP50Ms: r.latency.percentile(50),
        latencyP99Ms: r.latency.percentile(99),
        latencyMaxMs: r.latency.maxMs,
      })),
      pools: [...this.resources.pools].map(([id, pool]) => {
        const stats = pool.stats;
        return { id, slotCount: stats.slotCount, outstanding: stats.slotCount - stats.available, highWater: stats.highWater, exhaustions: stats.exhaustions };
      }),
      edges: [...this.resources.channels.values()].map((c) => ({
        id: c.edgeId,
        queueDepth: c.activeDepth,
        highWater: c.highWater,
        dropPolicy: c.dropPolicy,
        dropped: c.dropped,
        backpressured: c.backpressured,
        superseded: c.superseded,
      })),

      topics: [...this.resources.publications].map(([poolId, publication]) => ({
        topic: this.plan.pool(poolId)!.boundary!.topic,
        poolId,
        ...publication.stats(),
      })),
    };
  }

  /**
   * Releases pools and streams (and the backend when the session selected it). Call after `run()`
   * settled or `stop()`.
   * @throws HsError `InvalidState` while the session is running.
   */
  dispose(): void {
    if (this.state === 'disposed') return;
    if (this.state === 'running') {
      throw new HsError(ErrorCode.InvalidState, 'session is running; await stop() before dispose()');
    }
    for (const tap of this.taps) tap.close();
    sessionLeaks.untrack(this.leakToken);
    this.resources.dispose();
    if (this.ownsBackend) this.backend.dispose();
    this.state = 'disposed';
  }

  /** Same as `dispose()`. */
  [Symbol.dispose](): void {
    this.dispose();
  }

  /** For `await using`: stops a run in progress (draining it), then disposes; never rejects (see `stop()`). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
    this.dispose();
  }
}
