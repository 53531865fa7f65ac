import { FaultyResource, GridType, HostResource, StatisticsResource, pointsToGrid, type SyncResource } from '@hs/nanovdb-mr';
import { RunSession } from '@hs/runtime';
import { HostBackend, type ErrorCode } from '@hs/streams';
import { FaultyBackend, type FaultyBackendOptions, type LiveHandles } from './faulty-backend.js';
import { buildSoakGraph, soakImages } from './soak-graph.js';
import { outcomeOf } from './run-outcome.js';

/** What one fault scenario found. */
export interface ScenarioOutcome {
  readonly name: string;
  /** Faults the scenario injected. */
  readonly faultsInjected: number;
  /** Cases that left streams, events or allocations live after the session was disposed. */
  readonly leaks: number;
  /** Cases where `run()`, `stop()` or the drain did not settle within `boundMs`. */
  readonly hangs: number;
  /** Cases that ended some other way than the scenario requires (a wrong code, an unexpected success). */
  readonly wrongOutcomes: number;
  /** Cases run. */
  readonly cases: number;
  /** The bound `run()`/`stop()` must settle within, in milliseconds. */
  readonly boundMs: number;
  /** One line per problem found (empty when clean). */
  readonly problems: readonly string[];
}

/** Milliseconds a healthy or failing session gets to settle before a case counts as a hang. */
const SETTLE_BOUND_MS = 5_000;

function leaked(live: LiveHandles): boolean {
  return live.streams !== 0 || live.events !== 0 || live.allocations !== 0;
}

function describe(live: LiveHandles): string {
  return `${live.streams} streams, ${live.events} events, ${live.allocations} allocations live`;
}

/** Resolves with the promise's value, or with `timedOut` after `ms` milliseconds. */
function settleWithin<T>(promise: Promise<T>, ms: number): Promise<T | 'timedOut'> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'timedOut'>((resolve) => {
    timer = setTimeout(() => resolve('timedOut'), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/**
 * Counts the allocations, events and streams a healthy session of the soak graph creates, so the
 * start-failure scenario can fail each one of them in turn.
 */
function healthyCreateCalls(): { allocations: number; events: number; streams: number } {
  const counting = new CountingBackend(new HostBackend());
  const graph = buildSoakGraph(4, soakImages(1));
  if (!graph.ok) throw graph.error;
  const created = RunSession.create(graph.value.plan, { backend: counting });
  if (!created.ok) throw created.error;
  created.value.dispose();
  counting.dispose();
  return counting.calls;
}

/** A FaultyBackend with no faults that counts the creating calls. */
class CountingBackend extends FaultyBackend {
  readonly calls = { allocations: 0, events: 0, streams: 0 };
  override allocate(...args: Parameters<FaultyBackend['allocate']>): ReturnType<FaultyBackend['allocate']> {
    this.calls.allocations += 1;
    return super.allocate(...args);
  }
  override createEvent(...args: Parameters<FaultyBackend['createEvent']>): ReturnType<FaultyBackend['createEvent']> {
    this.calls.events += 1;
    return super.createEvent(...args);
  }
  override createStream(...args: Parameters<FaultyBackend['createStream']>): ReturnType<FaultyBackend['createStream']> {
    this.calls.streams += 1;
    return super.createStream(...args);
  }
}

/**
 * Session start with a pool (or stream, or event) that cannot be materialized: for every allocation,
 * event and stream a healthy `RunSession.create` makes, a run where that call and all later ones fail.
 * Each must return the injected code and leave no stream, event or allocation live.
 */
export function sessionStartFailures(): ScenarioOutcome {
  const calls = healthyCreateCalls();
  const problems: string[] = [];
  let faults = 0;
  let leaks = 0;
  let wrong = 0;
  let cases = 0;
  const kinds: [keyof typeof calls, keyof FaultyBackendOptions, ErrorCode][] = [
    ['allocations', 'failAllocationsFrom', 'OutOfMemory' as ErrorCode],
    ['events', 'failEventsFrom', 'DeviceError' as ErrorCode],
    ['streams', 'failStreamsFrom', 'DeviceError' as ErrorCode],
  ];
  for (const [kind, option, code] of kinds) {
    for (let n = 1; n <= calls[kind]; n++) {
      cases += 1;
      const backend = new FaultyBackend(new HostBackend(), { [option]: n });
      const graph = buildSoakGraph(4, soakImages(1));
      if (!graph.ok) throw graph.error;
      const created = RunSession.create(graph.value.plan, { backend });
      faults += backend.faultsInjected;
      if (created.ok) {
        wrong += 1;
        problems.push(`create succeeded although ${kind} call ${n} failed`);
        created.value.dispose();
      } else if (created.error.code !== code) {
        wrong += 1;
        problems.push(`${kind} call ${n} failed: expected ${code}, got ${created.error.message}`);
      }
      if (leaked(backend.live)) {
        leaks += 1;
        problems.push(`${kind} call ${n} failed: ${describe(backend.live)} after the failed create`);
      }
      backend.dispose();
    }
  }
  return { name: 'session start with unmaterializable resources', faultsInjected: faults, leaks, hangs: 0, wrongOutcomes: wrong, cases, boundMs: 0, problems };
}

/**
 * A stuck consumer: the stream of one statistics sink (`mirror`) gets stuck after `afterRecords` event
 * records (its release events never complete). While stuck, the producer's pool runs dry and the graph
 * must show backpressure (the run stays pending, the JS thread keeps turning a 5 ms timer) or end with
 * ResourceExhausted; `stop()` must then return within `drainTimeoutMs` + 5 s (the stated bound), the run
 * ending with the drain bound's InvalidState naming the held pools. A case past the bound counts as a
 * hang; the fault is then lifted (`unstick()`) so the session can end and be checked for leaks.
 */
export async function stuckConsumer(afterRecords: readonly number[], drainTimeoutMs = 200): Promise<ScenarioOutcome> {
  const boundMs = SETTLE_BOUND_MS + drainTimeoutMs;
  const problems: string[] = [];
  let faults = 0;
  let leaks = 0;
  let hangs = 0;
  let wrong = 0;
  for (const after of afterRecords) {
    const backend = new FaultyBackend(new HostBackend(), { stuckStream: (label) => label.includes('mirror'), stuckAfterRecords: after });
    const graph = buildSoakGraph(100_000, soakImages(after));
    if (!graph.ok) throw graph.error;
    const created = RunSession.create(graph.value.plan, { backend });
    if (!created.ok) throw created.error;
    const session = created.value;
    let ticks = 0;
    const ticker = setInterval(() => (ticks += 1), 5);
    const running = outcomeOf(session.run({ drainTimeoutMs }));
    const early = await settleWithin(running, 300);
    const ticksWhileStuck = ticks;
    if (early !== 'timedOut' && (early.ok || early.error.code !== 'ResourceExhausted')) {
      wrong += 1;
      problems.push(`stuck after ${after} records: expected backpressure or ResourceExhausted, the run ended with ${early.ok ? 'success' : early.error.message}`);
    }
    const stopped = await settleWithin(session.stop(), boundMs);
    if (stopped === 'timedOut') {
      hangs += 1;
      problems.push(`stuck after ${after} records: stop() did not return within ${boundMs} ms (${backend.pendingHostWaits} host waits pending)`);
      backend.unstick();
      await settleWithin(session.stop(), boundMs);
    }
    const ran = await settleWithin(running, boundMs);
    clearInterval(ticker);
    faults += backend.faultsInjected;
    if (ticksWhileStuck === 0) {
      hangs += 1;
      problems.push(`stuck after ${after} records: the JS thread never turned a 5 ms timer while the graph was stuck`);
    }
    if (ran === 'timedOut') {
      hangs += 1;
      problems.push(`stuck after ${after} records: the run never settled, even after the fault was lifted`);
      continue;
    }
    if (stopped !== 'timedOut' && early === 'timedOut' && (ran.ok || ran.error.code !== 'InvalidState')) {
      wrong += 1;
      problems.push(`stuck after ${after} records: expected the drain bound's InvalidState after stop(), got ${ran.ok ? 'success' : ran.error.message}`);
    }
    session.dispose();
    if (leaked(backend.live)) {
      leaks += 1;
      problems.push(`stuck after ${after} records: ${describe(backend.live)} after dispose`);
    }
    backend.dispose();
  }
  return { name: 'stuck consumer (release events never complete)', faultsInjected: faults, leaks, hangs, wrongOutcomes: wrong, cases: afterRecords.length, boundMs, problems };
}

/**
 * A device fault: kernel launch `n` (for each `n` given) throws on its stream. The run must fail with
 * DeviceError within the bound and, after dispose, leave nothing live.
 */
export async function kernelFaults(launches: readonly number[]): Promise<ScenarioOutcome> {
  const problems: string[] = [];
  let faults = 0;
  let leaks = 0;
  let hangs = 0;
  let wrong = 0;
  for (const n of launches) {
    const backend = new FaultyBackend(new HostBackend(), { faultKernelAt: n });
    const graph = buildSoakGraph(200, soakImages(n));
    if (!graph.ok) throw graph.error;
    const session = RunSession.create(graph.value.plan, { backend });
    if (!session.ok) throw session.error;
    const ran = await settleWithin(outcomeOf(session.value.run({ drainTimeoutMs: 1_000 })), SETTLE_BOUND_MS);
    faults += backend.faultsInjected;
    if (ran === 'timedOut') {
      hangs += 1;
      problems.push(`kernel fault at launch ${n}: the run did not settle within ${SETTLE_BOUND_MS} ms`);
      await session.value.stop();
    } else if (ran.ok || ran.error.code !== 'DeviceError') {
      wrong += 1;
      problems.push(`kernel fault at launch ${n}: expected DeviceError, got ${ran.ok ? 'success' : ran.error.message}`);
    }
    session.value.dispose();
    if (leaked(backend.live)) {
      leaks += 1;
      problems.push(`kernel fault at launch ${n}: ${describe(backend.live)} after dispose`);
    }
    backend.dispose();
  }
  return { name: 'device fault in a kernel', faultsInjected: faults, leaks, hangs, wrongOutcomes: wrong, cases: launches.length, boundMs: SETTLE_BOUND_MS, problems };
}

/** Index-space points of a small sphere shell, the grid the resource-fault scenario builds. */
function shellCoords(): Int32Array {
  const coords: number[] = [];
  for (let i = 0; i < 400; i++) {
    const t = (i / 400) * Math.PI * 2;
    coords.push(Math.round(40 * Math.cos(t)), Math.round(40 * Math.sin(t)), (i * 7) % 90);
  }
  return new Int32Array(coords);
}

/**
 * Resource faults under the NanoVDB builder: `pointsToGrid` through a `FaultyResource` over a
 * `StatisticsResource`, failing each allocation of a healthy build in turn (`failAt`), then at random from
 * each of `seeds` (probability 0.3). A failed build must return OutOfMemory; every build, failed or not,
 * must leave no bytes outstanding once its handle is disposed.
 */
export function resourceFaults(seeds: readonly number[]): ScenarioOutcome {
  const backend = new HostBackend();
  const problems: string[] = [];
  let faults = 0;
  let leaks = 0;
  let wrong = 0;
  let cases = 0;
  const build = (label: string, faulty: FaultyResource<SyncResource>, stats: StatisticsResource<SyncResource>): boolean => {
    cases += 1;
    const built = pointsToGrid(backend, faulty, { space: 'index', coords: shellCoords() }, { gridType: GridType.Float, name: 'shell' });
    faults += faulty.faultsInjected;
    if (built.ok) built.value.dispose();
    else if (built.error.code !== 'OutOfMemory') {
      wrong += 1;
      problems.push(`${label}: expected OutOfMemory, got ${built.error.message}`);
    }
    if (built.ok && faulty.faultsInjected > 0) {
      wrong += 1;
      problems.push(`${label}: the build succeeded although ${faulty.faultsInjected} allocations failed`);
    }
    const { bytes, allocations } = stats.statistics;
    if (bytes.current !== 0 || allocations.current !== 0) {
      leaks += 1;
      problems.push(`${label}: ${allocations.current} allocations (${bytes.current} bytes) outstanding after the build`);
    }
    return built.ok;
  };
  const healthyStats = new StatisticsResource<SyncResource>(new HostResource(backend));
  const healthy = new FaultyResource<SyncResource>(healthyStats, { probability: 0 });
  build('healthy build', healthy, healthyStats);
  for (let n = 1; n <= healthy.requests; n++) {
    const stats = new StatisticsResource<SyncResource>(new HostResource(backend));
    build(`allocation ${n} of ${healthy.requests} fails`, new FaultyResource<SyncResource>(stats, { failAt: n }), stats);
  }
  for (const seed of seeds) {
    const stats = new StatisticsResource<SyncResource>(new HostResource(backend));
    build(`random faults, seed ${seed}`, new FaultyResource<SyncResource>(stats, { probability: 0.3, seed }), stats);
  }
  backend.dispose();
  return { name: 'resource faults under the NanoVDB builder (FaultyResource)', faultsInjected: faults, leaks, hangs: 0, wrongOutcomes: wrong, cases, boundMs: 0, problems };
}
