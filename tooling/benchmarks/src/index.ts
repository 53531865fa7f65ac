import { BENCH_SECTIONS, type BenchSection, parseBenchSections } from '@hs/cli';
import { measureCompileScale } from './compile-scale.js';
import { measureSessionCreate } from './session-create-scale.js';
import { nodeStreamNsPerFrame } from './node-stream-baseline.js';
import { type HopCosts, measurePoolHop, poolHopHeapGrowth } from './pool-hop.js';
import { measurePointsToGrid } from './points-to-grid.js';
import { runRuntimeChain } from './runtime-chain.js';
import { measureClockSource, measureSetInterval } from './clock-ticks.js';
import { writeBenchReport } from './bench-report.js';
import { runIpcSection } from './ipc-section.js';

const FRAME_BYTES = 1 << 16;
const HOP_FRAMES = Number(process.env.HS_BENCH_FRAMES ?? 200_000);
const HEAP_FRAMES = Number(process.env.HS_BENCH_HEAP_FRAMES ?? 1_000_000);
const QUEUE_DEPTH = 4;
/** Issue 26 targets for the host hop rows, as multiples of the Node `Readable -> Writable` baseline of the same run. */
const POOL_HOP_TARGET = 1.5;
const FUSED_CHAIN_TARGET = 2.5;
/** The fused chain's sampled-latency row: one activation in this many timed (`RunSessionOptions.latencySampleInterval`). */
const LATENCY_SAMPLE_INTERVAL = 64;
/** Issue 26 target for the host PointsToGrid row, as a multiple of the Float64Array key sort of the same run. */
const P2G_TARGET = 1.3;
const CLOCK_HZ = 1000;
const CLOCK_TICKS = Number(process.env.HS_BENCH_CLOCK_TICKS ?? 2000);
const REPEATS = Number(process.env.HS_BENCH_REPEATS ?? 3);
if (!Number.isSafeInteger(REPEATS) || REPEATS < 1) throw new Error(`HS_BENCH_REPEATS must be a positive integer, got ${process.env.HS_BENCH_REPEATS}`);

const sections = parseBenchSections(process.env.HS_BENCH_SECTIONS ?? BENCH_SECTIONS.join(','), 'HS_BENCH_SECTIONS');
if (!sections.ok) {
  console.error(`hs bench: ${sections.error.message}`);
  process.exit(2);
}
const SECTIONS: ReadonlySet<BenchSection> = new Set(sections.value);

const fmt = (ns: number): string => `${ns.toFixed(0).padStart(7)} ns`;

console.log(`hs bench: ${HOP_FRAMES} frames of ${FRAME_BYTES} bytes, host backend, Node ${process.version}\n`);

if (SECTIONS.has('compile')) {
  const COMPILE_RUNS = Number(process.env.HS_BENCH_COMPILE_RUNS ?? 10);
  const scale = measureCompileScale(COMPILE_RUNS);
  console.log(`compile() of a ${scale.operators}-operator graph (${scale.edges} edges; derived byte spans, rates, temporal contracts), median of ${COMPILE_RUNS}:`);
  console.log(`  build the graph (authoring + every setup(), baseline)   ${scale.buildMs.toFixed(1).padStart(6)} ms   1.00x`);
  console.log(`  compile()                                              ${scale.compileMs.toFixed(1).padStart(6)} ms   ${(scale.compileMs / scale.buildMs).toFixed(2)}x\n`);
  // Goal (issue 22): RunSession.create of 40 000 chained operators under 5 s and 1 GB.
  console.log('RunSession.create() of a chain of N host operators (one pool each), against compile() of the same plan (baseline):');
  for (const operators of [5_000, 20_000, 40_000]) {
    const r = measureSessionCreate(operators);
    console.log(
      `  ${String(operators).padStart(6)} operators: compile() ${r.compileMs.toFixed(0).padStart(6)} ms   create() ${r.createMs.toFixed(0).padStart(6)} ms   ` +
        `${(r.createMs / r.compileMs).toFixed(2)}x   heap +${r.createHeapMiB.toFixed(0)} MiB   rss ${r.rssMiB.toFixed(0)} MiB`,
    );
  }
  console.log('');
}

if (SECTIONS.has('chain')) {
  // Every two-operator series runs REPEATS times, alternating, so load drift hits all alike; the text
  // shows medians, HS_BENCH_REPORT=<file> gets every repeat (the latency distributions `hs bench` plots).
  const baselineRuns: number[] = [];
  const hopRuns: HopCosts[] = [];
  const fusedRuns: number[] = [];
  const fencedRuns: number[] = [];
  const sampledRuns: number[] = [];
  for (let i = 0; i < REPEATS; i += 1) {
    baselineRuns.push(await nodeStreamNsPerFrame(HOP_FRAMES, FRAME_BYTES, QUEUE_DEPTH + 3, QUEUE_DEPTH));
    hopRuns.push(measurePoolHop(HOP_FRAMES, FRAME_BYTES));
    fusedRuns.push((await runRuntimeChain(HOP_FRAMES, FRAME_BYTES, QUEUE_DEPTH, null)).nsPerFrame);
    fencedRuns.push((await runRuntimeChain(HOP_FRAMES, FRAME_BYTES, QUEUE_DEPTH, null, true)).nsPerFrame);
    sampledRuns.push((await runRuntimeChain(HOP_FRAMES, FRAME_BYTES, QUEUE_DEPTH, null, false, LATENCY_SAMPLE_INTERVAL)).nsPerFrame);
  }
  const middle = (runs: readonly number[]): number => [...runs].sort((a, b) => a - b)[Math.floor((runs.length - 1) / 2)] as number;
  const baseline = middle(baselineRuns);
  const hop = hopRuns.find((run) => run.total === middle(hopRuns.map((r) => r.total))) as HopCosts;
  const chain = middle(fusedRuns);
  const fenced = middle(fencedRuns);
  const sampled = middle(sampledRuns);
  const reportPath = process.env.HS_BENCH_REPORT;
  if (reportPath !== undefined && reportPath !== '') {
    const series = (id: string, label: string, samples: readonly number[], isBaseline = false) => ({ id, label, unit: 'ns/frame' as const, baseline: isBaseline, samples });
    await writeBenchReport(reportPath, {
      schema: 'hs-bench-report/1',
      node: process.version,
      frames: HOP_FRAMES,
      frameBytes: FRAME_BYTES,
      repeats: REPEATS,
      series: [
        series('node-stream', 'Node Readable -> Writable', baselineRuns, true),
        series('pool-hop', 'hs pool hop (no scheduler)', hopRuns.map((r) => r.total)),
        series('runtime-chain-fused', 'hs RunSession source -> sink (fused)', fusedRuns),
        series('runtime-chain-fenced', 'hs RunSession, fullFences', fencedRuns),
        series('runtime-chain-sampled', `hs RunSession (fused), latency timed 1 in ${LATENCY_SAMPLE_INTERVAL}`, sampledRuns),
      ],
    });
  }

  console.log('per-hop cost, producer -> consumer through a TensorPool (per-step timers add ~40 ns each):');
  for (const step of ['allocate', 'write', 'commit', 'emit', 'receive', 'release', 'retire'] as const) {
    console.log(`  ${step.padEnd(9)} ${fmt(hop[step])}`);
  }
  console.log(`  ${'hop total'.padEnd(9)} ${fmt(hop.total)}   (no per-step timers)\n`);
  // Targets of issue 26 (host hop rows), as ratios to the Node baseline measured in this run.
  const target = (ratio: number, limit: number): string => `target <= ${limit.toFixed(1)}x ${ratio <= limit ? 'met' : 'NOT met'}`;
  console.log('two-operator chain, same frames, same run:');
  console.log(`  Node Readable -> Writable (baseline)   ${fmt(baseline)} / frame   1.00x`);
  console.log(`  hs pool hop (no scheduler)             ${fmt(hop.total)} / frame   ${(hop.total / baseline).toFixed(2)}x   ${target(hop.total / baseline, POOL_HOP_TARGET)}`);
  console.log(`  hs RunSession source -> sink (fused)   ${fmt(chain)} / frame   ${(chain / baseline).toFixed(2)}x   ${target(chain / baseline, FUSED_CHAIN_TARGET)}`);
  console.log(`  same, latency timed 1 in ${String(LATENCY_SAMPLE_INTERVAL).padEnd(13)} ${fmt(sampled)} / frame   ${(sampled / baseline).toFixed(2)}x   ${target(sampled / baseline, FUSED_CHAIN_TARGET)}`);
  console.log(`  same, fullFences (no elision)          ${fmt(fenced)} / frame   ${(fenced / baseline).toFixed(2)}x   (medians of ${REPEATS})\n`);

  // A periodic source: the clock trigger's achieved rate and tick jitter against setInterval, same run.
  const interval = await measureSetInterval(CLOCK_HZ, CLOCK_TICKS);
  const clocked = await measureClockSource(CLOCK_HZ, CLOCK_TICKS);
  const caughtUp = await measureClockSource(CLOCK_HZ, CLOCK_TICKS, 'catchUp');
  const us = (ns: number): string => `${(ns / 1000).toFixed(1).padStart(6)} us`;
  console.log(`periodic source at ${CLOCK_HZ} Hz, ${CLOCK_TICKS} ticks (jitter = |interval - period|), same run:`);
  for (const [name, f] of [
    ['setInterval (baseline)', interval],
    ['hs clock-triggered source', clocked],
    ['same, missedTicks catchUp', caughtUp],
  ] as const) {
    console.log(`  ${name.padEnd(27)} achieved ${f.achievedHz.toFixed(1).padStart(7)} Hz   jitter p50 ${us(f.jitterP50Ns)}  p99 ${us(f.jitterP99Ns)}` + (f === interval ? '' : `   skipped ticks ${f.skippedTicks}`));
  }
  console.log('');
}

if (SECTIONS.has('heap')) {
  const growth = poolHopHeapGrowth(HEAP_FRAMES, FRAME_BYTES);
  const perFrame = (bytes: number): string => `${bytes} bytes (${(bytes / HEAP_FRAMES).toFixed(4)} bytes/frame)`;
  console.log(`JS heap growth after warm-up over ${HEAP_FRAMES} frames, forced GC before and after:`);
  console.log(`  pool hops            ${perFrame(growth)}`);
  const long = await runRuntimeChain(HEAP_FRAMES + 20_000, FRAME_BYTES, QUEUE_DEPTH, 20_000);
  // The ns/frame figures here include the probes' two forced GCs (the chain section's rows force none).
  console.log(`  RunSession chain     ${perFrame(long.heapGrowthBytes ?? Number.NaN)}  (${long.nsPerFrame.toFixed(0)} ns/frame)`);
  const longSampled = await runRuntimeChain(HEAP_FRAMES + 20_000, FRAME_BYTES, QUEUE_DEPTH, 20_000, false, LATENCY_SAMPLE_INTERVAL);
  console.log(`  same, sampled 1/${LATENCY_SAMPLE_INTERVAL}   ${perFrame(longSampled.heapGrowthBytes ?? Number.NaN)}  (${longSampled.nsPerFrame.toFixed(0)} ns/frame)`);
}

if (SECTIONS.has('p2g')) {
  const P2G_SIZES = (process.env.HS_BENCH_P2G_POINTS ?? '1000000,10000000').split(',').map(Number);
  console.log('\nhost PointsToGrid (OnIndex, index-space points in a 1024^3 cube, checksum off), best of 3, builds and sorts alternating;');
  console.log('baseline: Float64Array sort of one packed voxel key per point, same points, same run;');
  console.log('fresh = workspace and grid from a HostResource (new memory each build), reused = from a RegionResource kept across builds:');
  for (const n of P2G_SIZES) {
    for (const distribution of ['uniform', 'clustered'] as const) {
      for (const reuse of [false, true]) {
        const f = measurePointsToGrid(n, distribution, 3, reuse);
        const mps = (x: number): string => `${(x / 1e6).toFixed(2).padStart(6)} M points/s`;
        const ratio = f.buildPointsPerSecond / f.sortPointsPerSecond;
        console.log(
          `  ${String(n).padStart(9)} ${distribution.padEnd(9)} ${(reuse ? 'reused' : 'fresh').padEnd(6)} ${String(f.activeVoxels).padStart(9)} voxels   build ${mps(f.buildPointsPerSecond)}   sort ${mps(f.sortPointsPerSecond)}   build/sort ${ratio.toFixed(2)}x`,
        );
      }
    }
  }
  console.log(`  target (issue 26): build/sort >= ${P2G_TARGET}x (NanoVDB's CPU path against the same sort)`);
}

if (SECTIONS.has('ipc')) await runIpcSection();
