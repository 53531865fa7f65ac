import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compile, type ExecutionPlan } from '@hs/compiler';
import { GridType, HostResource, pointsToGrid } from '@hs/nanovdb-mr';
import { RunSession } from '@hs/runtime';
import { Device, ErrorCode, HostBackend, OK_VOID, err, unwrap, type HsError, type Result } from '@hs/streams';
import { buildLifecycleGraph } from '../../../examples/derived-capacity/src/lifecycle-graph.js';
import { buildImagePipeline } from '../../../examples/image-pipeline/src/pipeline.js';
import { bunnyPoints } from '../../../examples/point-cloud-input/src/load-points.js';
import { buildScanToVolumeGraph } from '../../../examples/scan-to-volume/src/pipeline.js';
import { buildSoakGraph, soakImages } from './soak-graph.js';
import { outcomeOf } from './run-outcome.js';

/** What the chaos runs found. */
export interface ChaosOutcome {
  readonly seeds: readonly number[];
  /** Example workloads run per seed. */
  readonly workloads: readonly string[];
  /** Workload runs (workloads x seeds). */
  readonly runs: number;
  /** Ordering-checker violations over all runs (races): must be 0. */
  readonly violations: number;
  /** One line per failed run or violation (empty when clean). */
  readonly problems: readonly string[];
}

/** A chaos workload: runs one example on `backend` and resolves with its outcome. */
type Workload = (backend: HostBackend, seed: number, outDir: string) => Promise<Result<unknown>>;

async function runPlan(plan: ExecutionPlan, backend: HostBackend): Promise<Result<unknown>> {
  const session = RunSession.create(plan, { backend });
  if (!session.ok) return session;
  try {
    return await outcomeOf(session.value.run());
  } finally {
    session.value.dispose();
  }
}

const WORKLOADS: readonly (readonly [string, Workload])[] = [
  [
    'image-pipeline (example graph, PNG writer and statistics)',
    async (backend, seed, outDir) => {
      const pipeline = buildImagePipeline({ images: soakImages(seed), frames: 5, rateHz: 1e6, outDir: join(outDir, 'frames') });
      return pipeline.ok ? runPlan(pipeline.value.plan, backend) : pipeline;
    },
  ],
  [
    'image-pipeline soak graph (two stream consumers)',
    async (backend, seed) => {
      const graph = buildSoakGraph(40, soakImages(seed));
      return graph.ok ? runPlan(graph.value.plan, backend) : graph;
    },
  ],
  [
    'derived-capacity lifecycle graph (retained history)',
    async (backend) => {
      const compiled = compile(buildLifecycleGraph(4).graph);
      return compiled.ok ? runPlan(compiled.value, backend) : compiled;
    },
  ],
  [
    'points-to-grid (bunny grid, device round trip on two streams)',
    async (backend) => {
      const resource = new HostResource(backend);
      const built = pointsToGrid(backend, resource, { space: 'world', positions: bunnyPoints().positions }, { gridType: GridType.OnIndex, voxelSize: 0.1, name: 'bunny' });
      if (!built.ok) return built;
      const handle = built.value;
      const cuda0 = backend.devices[0] as Device;
      const there = unwrap(backend.createStream(cuda0, { label: 'to device' }));
      const back = unwrap(backend.createStream(cuda0, { label: 'to host' }));
      const done = unwrap(backend.createEvent(cuda0, { label: 'on device' }));
      try {
        const onDevice = handle.copyTo(there);
        if (!onDevice.ok) return onDevice;
        unwrap(backend.recordEvent(done, there));
        unwrap(backend.streamWaitEvent(back, done));
        const returned = onDevice.value.copyTo(back);
        if (!returned.ok) return returned;
        try {
          await backend.synchronizeStream(back);
        } catch (error) {
          return { ok: false, error: error as HsError };
        }
        const original = unwrap(handle.hostBytes());
        const copy = unwrap(returned.value.hostBytes());
        const same = original.length === copy.length && original.every((b, i) => b === copy[i]);
        returned.value.dispose();
        onDevice.value.dispose();
        return same ? OK_VOID : err(ErrorCode.ProtocolError, 'the grid copied to the device and back differs from the original');
      } finally {
        handle.dispose();
        backend.destroyEvent(done);
        backend.destroyStream(there);
        backend.destroyStream(back);
      }
    },
  ],
  [
    'scan-to-volume (the flagship: 8 bunny scans into one grid, .nvdb writer and CUDA-active preview)',
    async (backend, seed, outDir) => {
      const dir = join(outDir, `scan-to-volume-${seed}`);
      await mkdir(dir, { recursive: true });
      const built = buildScanToVolumeGraph({ cloud: bunnyPoints(), voxelSize: 0.5, scans: 8, sweeps: 1, rateHz: 100_000, outDir: dir, codec: 'none' });
      if (!built.ok) return built;
      const compiled = compile(built.value.graph, built.value.compileOptions);
      return compiled.ok ? runPlan(compiled.value, backend) : compiled;
    },
  ],
];

/**
 * Runs every example workload on a host backend with seeded random stream interleaving and the ordering
 * checker on, once per seed. Every run must succeed with zero ordering violations.
 */
export async function runChaos(seeds: readonly number[]): Promise<ChaosOutcome> {
  const problems: string[] = [];
  let violations = 0;
  let runs = 0;
  const outDir = await mkdtemp(join(tmpdir(), 'hs-chaos-'));
  try {
    for (const seed of seeds) {
      for (const [name, workload] of WORKLOADS) {
        const backend = new HostBackend({ seed, orderingChecker: true });
        try {
          const outcome = await workload(backend, seed, outDir);
          runs += 1;
          const checker = backend.orderingChecker;
          const found = (checker?.violations.length ?? 0) + (checker?.droppedViolations ?? 0);
          violations += found;
          if (!outcome.ok) problems.push(`seed ${seed}, ${name}: ${outcome.error.message}`);
          if (found > 0) problems.push(`seed ${seed}, ${name}: ${found} ordering violations, first: ${JSON.stringify(checker?.violations[0])}`);
        } finally {
          backend.dispose();
        }
      }
    }
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
  return { seeds, workloads: WORKLOADS.map(([name]) => name), runs, violations, problems };
}
