import { measureCompileScale } from './compile-scale.js';
import { nodeStreamNsPerFrame } from './node-stream-baseline.js';
import { measurePoolHop, poolHopHeapGrowth } from './pool-hop.js';
import { measurePointsToGrid } from './points-to-grid.js';
import { runRuntimeChain } from './runtime-chain.js';

const FRAME_BYTES = 1 << 16;
const HOP_FRAMES = Number(process.env.HS_BENCH_FRAMES ?? 200_000);
const HEAP_FRAMES = Number(process.env.HS_BENCH_HEAP_FRAMES ?? 1_000_000);
const QUEUE_DEPTH = 4;

const fmt = (ns: number): string => `${ns.toFixed(0).padStart(7)} ns`;

console.log(`hs bench: ${HOP_FRAMES} frames of ${FRAME_BYTES} bytes, host backend, Node ${process.version}\n`);

const scale = measureCompileScale(10);
console.log(`compile() of a ${scale.operators}-operator graph (${scale.edges} edges; derived byte spans, rates, temporal contracts), median of 10:`);
console.log(`  build the graph (authoring + every setup(), baseline)   ${scale.buildMs.toFixed(1).padStart(6)} ms   1.00x`);
console.log(`  compile()                                              ${scale.compileMs.toFixed(1).padStart(6)} ms   ${(scale.compileMs / scale.buildMs).toFixed(2)}x\n`);

const baseline = await nodeStreamNsPerFrame(HOP_FRAMES, FRAME_BYTES, QUEUE_DEPTH + 3, QUEUE_DEPTH);
const hop = measurePoolHop(HOP_FRAMES, FRAME_BYTES);
// Fused and full-fence runs alternate (three each, medians) so load drift hits both alike.
const fusedRuns: number[] = [];
const fencedRuns: number[] = [];
for (let i = 0; i < 3; i += 1) {
  fusedRuns.push((await runRuntimeChain(HOP_FRAMES, FRAME_BYTES, QUEUE_DEPTH, 20_000)).nsPerFrame);
  fencedRuns.push((await runRuntimeChain(HOP_FRAMES, FRAME_BYTES, QUEUE_DEPTH, 20_000, true)).nsPerFrame);
}
const middle = (runs: number[]): number => runs.sort((a, b) => a - b)[1] as number;
const chain = middle(fusedRuns);
const fenced = middle(fencedRuns);

console.log('per-hop cost, producer -> consumer through a TensorPool (per-step timers add ~40 ns each):');
for (const step of ['allocate', 'write', 'commit', 'emit', 'receive', 'release', 'retire'] as const) {
  console.log(`  ${step.padEnd(9)} ${fmt(hop[step])}`);
}
console.log(`  ${'hop total'.padEnd(9)} ${fmt(hop.total)}   (no per-step timers)\n`);
console.log('two-operator chain, same frames, same run:');
console.log(`  Node Readable -> Writable (baseline)   ${fmt(baseline)} / frame   1.00x`);
console.log(`  hs pool hop (no scheduler)             ${fmt(hop.total)} / frame   ${(hop.total / baseline).toFixed(2)}x`);
console.log(`  hs RunSession source -> sink (fused)   ${fmt(chain)} / frame   ${(chain / baseline).toFixed(2)}x`);
console.log(`  same, fullFences (no elision)          ${fmt(fenced)} / frame   ${(fenced / baseline).toFixed(2)}x   (medians of 3)\n`);

const growth = poolHopHeapGrowth(HEAP_FRAMES, FRAME_BYTES);
const perFrame = (bytes: number): string => `${bytes} bytes (${(bytes / HEAP_FRAMES).toFixed(4)} bytes/frame)`;
console.log(`JS heap growth after warm-up over ${HEAP_FRAMES} frames, forced GC before and after:`);
console.log(`  pool hops            ${perFrame(growth)}`);
const long = await runRuntimeChain(HEAP_FRAMES + 20_000, FRAME_BYTES, QUEUE_DEPTH, 20_000);
console.log(`  RunSession chain     ${perFrame(long.heapGrowthBytes)}  (${long.nsPerFrame.toFixed(0)} ns/frame)`);

const P2G_SIZES = (process.env.HS_BENCH_P2G_POINTS ?? '1000000,10000000').split(',').map(Number);
console.log('\nhost PointsToGrid (OnIndex, index-space points in a 1024^3 cube, checksum off), best of 3;');
console.log('baseline: Float64Array sort of one packed voxel key per point, same points, same run:');
for (const n of P2G_SIZES) {
  for (const distribution of ['uniform', 'clustered'] as const) {
    const f = measurePointsToGrid(n, distribution);
    const mps = (x: number): string => `${(x / 1e6).toFixed(2).padStart(6)} M points/s`;
    console.log(
      `  ${String(n).padStart(9)} ${distribution.padEnd(9)} ${String(f.activeVoxels).padStart(9)} voxels   build ${mps(f.buildPointsPerSecond)}   sort ${mps(f.sortPointsPerSecond)}   build/sort ${(f.buildPointsPerSecond / f.sortPointsPerSecond).toFixed(2)}x`,
    );
  }
}
