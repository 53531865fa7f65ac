import { runChaos } from './chaos.js';
import { kernelFaults, resourceFaults, sessionStartFailures, stuckConsumer, type ScenarioOutcome } from './fault-scenarios.js';
import { FUZZ_SEED, fuzzRuns, type FuzzOutcome } from './fuzz-settings.js';
import { fuzzByteSpanParams } from './fuzz/byte-span-params.js';
import { fuzzDLPackImport } from './fuzz/dlpack-import.js';
import { fuzzGraphAuthoring } from './fuzz/graph-authoring.js';
import { fuzzIpcDescriptors } from './fuzz/ipc-descriptor.js';
import { fuzzNanoVdbCorruption } from './fuzz/nanovdb-corruption.js';
import { crossProcessSoak } from './cross-process-soak.js';
import { deviceMemoryFlat, soak, type SoakBackend } from './soak.js';
import { FLAGSHIP_SOAK_DEFAULT_SCANS, flagshipSoak } from './flagship-soak.js';
import { CudaBackend } from '@hs/streams';

// `pnpm soak`: the reliability run and its one report. Environment: HS_SOAK_FRAMES (default 1e6),
// HS_SOAK_TOPIC_FRAMES (frames of the cross-process topic soak, default 1e6; run again beside a hostile peer),
// HS_SOAK_HOSTILE_PEERS (connections of that hostile peer, default 4; 0 skips the hostile run),
// HS_SOAK_BACKEND (host, cuda or auto = cuda when a device is usable; default auto),
// HS_SOAK_FLAGSHIP_FRAMES (scans of the scan-to-volume flagship soak, rounded up to whole sweeps of 36;
// default FLAGSHIP_SOAK_DEFAULT_SCANS, 1e6: about 85 minutes on 2 cores, see flagship-soak.ts),
// HS_SOAK_SEED (default 1), HS_CHAOS_SEEDS (how many seeds, 1..N; default 16), HS_FUZZ_RUNS (inputs per
// fuzz target; default per target below), HS_FUZZ_SEED. Exits 1 when anything is found.

function nonNegativeInteger(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) {
    console.error(`${name} must be a non-negative integer, got "${raw}"`);
    process.exit(2);
  }
  return value;
}

function positiveInteger(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) {
    console.error(`${name} must be a positive integer, got "${raw}"`);
    process.exit(2);
  }
  return value;
}

const FLATNESS = 0.01;
const frames = positiveInteger('HS_SOAK_FRAMES', 1_000_000);
const soakSeed = positiveInteger('HS_SOAK_SEED', 1);
const chaosSeeds = Array.from({ length: positiveInteger('HS_CHAOS_SEEDS', 16) }, (_, i) => i + 1);
const backendChoice = process.env['HS_SOAK_BACKEND'] ?? 'auto';
if (!['host', 'cuda', 'auto'].includes(backendChoice)) {
  console.error(`HS_SOAK_BACKEND must be host, cuda or auto, got "${backendChoice}"`);
  process.exit(2);
}
const soakBackend: SoakBackend = backendChoice === 'auto' ? (CudaBackend.available() ? 'cuda' : 'host') : (backendChoice as SoakBackend);
// Flat means no growth past 1% after warm-up; memory the GC or the allocator hands back is not a leak.
const flat = (m: { readonly heapGrowth: number; readonly rssGrowth: number } | null): boolean => m === null || (m.heapGrowth <= FLATNESS && m.rssGrowth <= FLATNESS);
const pct = (x: number): string => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(2)}%`;

const runStarted = performance.now();
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
console.log('hs reliability report');

const scenarios: ScenarioOutcome[] = [sessionStartFailures(), resourceFaults([1, 2, 3, 4, 5, 6, 7, 8]), await stuckConsumer([0, 3]), await kernelFaults([1, 7, 20])];
console.log('\nfault injection');
for (const s of scenarios) {
  console.log(`  ${s.name}: ${s.cases} cases, ${s.faultsInjected} faults injected, ${s.leaks} leaks, ${s.hangs} hangs${s.boundMs > 0 ? ` (bound ${s.boundMs} ms)` : ''}, ${s.wrongOutcomes} wrong outcomes`);
  for (const p of s.problems) console.log(`    ! ${p}`);
}

const fuzz: FuzzOutcome[] = [
  fuzzDLPackImport(fuzzRuns(20_000)),
  fuzzByteSpanParams(fuzzRuns(10_000)),
  fuzzGraphAuthoring(fuzzRuns(5_000)),
  fuzzNanoVdbCorruption(fuzzRuns(1_000)),
  fuzzIpcDescriptors(fuzzRuns(5_000)),
];
console.log(`\nfuzzing (fast-check, seed ${FUZZ_SEED})`);
for (const f of fuzz) {
  console.log(`  ${f.name}: ${f.runs} inputs; ${f.detail}${f.failure === null ? '' : `\n    ! ${f.failure}`}`);
}

const chaos = await runChaos(chaosSeeds);
console.log(`\nchaos (seeded interleavings, ordering checker on, seeds ${chaosSeeds[0]}..${chaosSeeds[chaosSeeds.length - 1]})`);
console.log(`  ${chaos.workloads.length} workloads x ${chaos.seeds.length} seeds = ${chaos.runs} runs; ${chaos.violations} ordering violations`);
for (const w of chaos.workloads) console.log(`    - ${w}`);
for (const p of chaos.problems) console.log(`    ! ${p}`);

const run = await soak({ frames, seed: soakSeed, backend: soakBackend });
const live = run.liveAfterDispose;
const liveLeaks = live.streams + live.events + live.allocations;
console.log(`\nsoak (image-pipeline graph, ${run.backend} backend, seed ${soakSeed})`);
console.log(`  ${run.frames} frames in ${(run.elapsedMs / 1000).toFixed(1)} s (${Math.round(run.frames / (run.elapsedMs / 1000))} frames/s)${run.runError === null ? '' : `; run error: ${run.runError}`}`);
console.log(`  leaked slots ${run.leakedSlots}; live after dispose: ${live.streams} streams, ${live.events} events, ${live.allocations} allocations`);
console.log(`  live streams seen ${run.streamCounts.join(', ')}; live events seen ${run.eventCounts.join(', ')} (each must be one value)`);
const device = run.deviceMemory;
if (run.backend === 'cuda') {
  if (device === null) console.log('  device memory: not sampled (the run ended before its warm-up sample)');
  else {
    console.log(
      `  device 0 after warm-up -> end: pool used ${device.poolUsedAfterWarmup} -> ${device.poolUsedAtEnd} bytes, pool reserved ${device.poolReservedAfterWarmup} -> ${device.poolReservedAtEnd} bytes, free ${device.freeAfterWarmup} -> ${device.freeAtEnd} bytes of ${device.total}`,
    );
  }
}
const memory = run.memory;
if (memory === null) console.log('  memory: not measured (run node with --expose-gc, as `pnpm soak` does)');
else {
  console.log(
    `  after forced GC: heap ${memory.heapAfterWarmup} -> ${memory.heapAtEnd} bytes (${pct(memory.heapGrowth)}), RSS ${memory.rssAfterWarmup} -> ${memory.rssAtEnd} bytes (${pct(memory.rssGrowth)}); growth limit +${FLATNESS * 100}% after warm-up (10% of frames), ${memory.samples} samples`,
  );
}

const flagship = await flagshipSoak({ frames: positiveInteger('HS_SOAK_FLAGSHIP_FRAMES', FLAGSHIP_SOAK_DEFAULT_SCANS), seed: soakSeed, backend: soakBackend });
const flagshipLive = flagship.liveAfterDispose;
const flagshipLeaks = flagship.leakedSlots + flagshipLive.streams + flagshipLive.events + flagshipLive.allocations + (flagship.resourceBytesOutstanding > 0 ? 1 : 0);
console.log(`\nflagship soak (scan-to-volume graph: the bunny as 36 scans per sweep into one growing grid, ${flagship.backend} backend, seed ${soakSeed})`);
console.log(
  `  ${flagship.frames} scans in ${(flagship.elapsedMs / 1000).toFixed(1)} s (${Math.round(flagship.frames / (flagship.elapsedMs / 1000))} scans/s)${flagship.runError === null ? '' : `; run error: ${flagship.runError}`}; ` +
    `volume ${flagship.voxelCount} voxels (${flagship.expectedVoxelCount} expected); ${flagship.nvdbWrites} .nvdb writes, ${flagship.previews} previews`,
);
console.log(`  leaked slots ${flagship.leakedSlots}; live after dispose: ${flagshipLive.streams} streams, ${flagshipLive.events} events, ${flagshipLive.allocations} allocations; resource bytes outstanding ${flagship.resourceBytesOutstanding}`);
console.log(`  live streams seen ${flagship.streamCounts.join(', ')}; live events seen ${flagship.eventCounts.join(', ')} (each must be one value)`);
const flagshipMemory = flagship.memory;
if (flagshipMemory !== null) {
  console.log(
    `  after forced GC: heap ${flagshipMemory.heapAfterWarmup} -> ${flagshipMemory.heapAtEnd} bytes (${pct(flagshipMemory.heapGrowth)}), RSS ${flagshipMemory.rssAfterWarmup} -> ${flagshipMemory.rssAtEnd} bytes (${pct(flagshipMemory.rssGrowth)}); growth limit +${FLATNESS * 100}% after warm-up (half the scans), ${flagshipMemory.samples} samples`,
  );
}
const flagshipDevice = flagship.deviceMemory;
if (flagship.backend === 'cuda' && flagshipDevice !== null) {
  console.log(`  device 0 after warm-up -> end: pool used ${flagshipDevice.poolUsedAfterWarmup} -> ${flagshipDevice.poolUsedAtEnd} bytes, free ${flagshipDevice.freeAfterWarmup} -> ${flagshipDevice.freeAtEnd} bytes`);
}
const flagshipClean =
  flagship.runError === null &&
  flagshipLeaks === 0 &&
  flagship.voxelCount === flagship.expectedVoxelCount &&
  flagship.streamCounts.length === 1 &&
  flagship.eventCounts.length === 1 &&
  flat(flagshipMemory) &&
  (flagship.backend === 'host' || (flagshipDevice !== null && deviceMemoryFlat(flagshipDevice, FLATNESS)));

const topicFrames = positiveInteger('HS_SOAK_TOPIC_FRAMES', 1_000_000);
const topics = await crossProcessSoak(topicFrames, { backend: soakBackend });
console.log(
  `\ncross-process soak (producer graph here, consumer graph in a child process, ${topics.backend === 'cuda' ? 'device topic over CUDA IPC with generation fences' : 'host topic over POSIX shm'})`,
);
console.log(
  `  ${topics.consumer.frames}/${topics.frames} frames received in ${(topics.producer.elapsedMs / 1000).toFixed(1)} s ` +
    `(${Math.round(topics.frames / Math.max(topics.producer.elapsedMs / 1000, 1e-9))} frames/s); bad bytes ${topics.consumer.badBytes}; boundary slots out at the end ${topics.producer.slotsOut}`,
);
const producerMemory = topics.producerMemory;
if (producerMemory === null) console.log('  producer memory: not measured (needs --expose-gc and a sample past warm-up)');
else {
  console.log(
    `  producer process after forced GC: heap ${producerMemory.heapAfterWarmup} -> ${producerMemory.heapAtEnd} bytes (${pct(producerMemory.heapGrowth)}), RSS ${producerMemory.rssAfterWarmup} -> ${producerMemory.rssAtEnd} bytes (${pct(producerMemory.rssGrowth)}); growth limit +${FLATNESS * 100}% after warm-up (10% of frames), ${producerMemory.samples} samples`,
  );
}
const topicDevice = topics.deviceMemory;
if (topics.backend === 'cuda') {
  if (topicDevice === null) console.log('  device memory: not sampled (the run ended before its warm-up sample)');
  else console.log(`  device 0 after warm-up -> end: pool used ${topicDevice.poolUsedAfterWarmup} -> ${topicDevice.poolUsedAtEnd} bytes, free ${topicDevice.freeAfterWarmup} -> ${topicDevice.freeAtEnd} bytes`);
}
for (const side of [topics.producer, topics.consumer]) if (side.error !== null) console.log(`    ! ${side.error}`);

// The hostile peer attacks a host topic (device topics have no ATTACH and no segments to truncate): its
// baseline is the host run above, or one more host run when the soak ran on CUDA.
const hostilePeers = nonNegativeInteger('HS_SOAK_HOSTILE_PEERS', 4);
const hostileBaseline = hostilePeers === 0 ? null : topics.backend === 'host' ? topics : await crossProcessSoak(topicFrames, { backend: 'host' });
const hostileRun = hostilePeers === 0 ? null : await crossProcessSoak(topicFrames, { backend: 'host', hostilePeers });
if (hostileRun !== null && hostileBaseline !== null && hostileRun.hostile !== null) {
  const h = hostileRun.hostile;
  const ratio = hostileRun.framesPerSecond / Math.max(hostileBaseline.framesPerSecond, 1e-9);
  console.log(`\ncross-process soak with a hostile peer (host topic; a same-uid child process with ${hostilePeers} connections attacking it for the whole run)`);
  console.log(
    `  ${hostileRun.consumer.frames}/${hostileRun.frames} frames received in ${(hostileRun.producer.elapsedMs / 1000).toFixed(1)} s; good subscriber ${Math.round(hostileRun.framesPerSecond)} frames/s ` +
      `beside the hostile peer, ${Math.round(hostileBaseline.framesPerSecond)} frames/s without it (ratio ${ratio.toFixed(3)}); bad bytes ${hostileRun.consumer.badBytes}; boundary slots out at the end ${hostileRun.producer.slotsOut}`,
  );
  const attacks = Object.entries(h.connections).map(([kind, n]) => `${kind} ${n}`).join(', ');
  const truncations = Object.entries(h.truncations).map(([outcome, n]) => `${outcome} ${n}`).join(', ') || 'none (no segment found)';
  console.log(`  hostile connections: ${attacks}; subscriber losses the publisher reported ${h.subscribersLost}; ftruncate on the publisher's segments: ${truncations}`);
  for (const side of [hostileRun.producer, hostileRun.consumer]) if (side.error !== null) console.log(`    ! ${side.error}`);
}
const hostileProblems = (hostileRun?.problems ?? 0) + (hostileBaseline !== null && hostileBaseline !== topics ? hostileBaseline.problems : 0);

const faultsInjected = scenarios.reduce((n, s) => n + s.faultsInjected, 0);
const inputsFuzzed = fuzz.reduce((n, f) => n + f.runs, 0);
const leaks = scenarios.reduce((n, s) => n + s.leaks, 0) + run.leakedSlots + liveLeaks + flagshipLeaks + topics.problems + hostileProblems;
const hangs = scenarios.reduce((n, s) => n + s.hangs, 0);
const wrong = scenarios.reduce((n, s) => n + s.wrongOutcomes, 0);
const fuzzFailures = fuzz.filter((f) => f.failure !== null).length;
const memoryFlat = flat(memory) && flat(flagshipMemory) && flat(producerMemory);
const countsConstant = run.streamCounts.length === 1 && run.eventCounts.length === 1 && flagship.streamCounts.length === 1 && flagship.eventCounts.length === 1;
// On CUDA the device memory must be sampled and flat too (the flagship's is part of flagshipClean).
const deviceFlat =
  (run.backend === 'host' || (device !== null && deviceMemoryFlat(device, FLATNESS))) &&
  (topics.backend === 'host' || (topicDevice !== null && deviceMemoryFlat(topicDevice, FLATNESS)));

console.log('\nsummary');
console.log(`  frames ${run.frames} + ${flagship.frames} flagship scans + ${topics.consumer.frames} cross-process | faults injected ${faultsInjected} | inputs fuzzed ${inputsFuzzed} | races found ${chaos.violations} | leaks ${leaks} | hangs ${hangs}`);
console.log(`  fuzz failures ${fuzzFailures} | wrong fault outcomes ${wrong} | memory flat ${memoryFlat ? 'yes' : 'NO'} | device memory flat ${run.backend === 'host' ? 'n/a (host backend)' : deviceFlat ? 'yes' : 'NO'} | handle counts constant ${countsConstant ? 'yes' : 'NO'}`);
console.log(`  wall time ${seconds(performance.now() - runStarted)}: image-pipeline soak ${seconds(run.elapsedMs)}, flagship ${seconds(flagship.elapsedMs)}, cross-process ${seconds(topics.producer.elapsedMs)}${hostileRun === null ? '' : `, beside the hostile peer ${seconds(hostileRun.producer.elapsedMs)}`}`);
console.log(`  seeds: soak ${soakSeed}, fuzz ${FUZZ_SEED}, chaos ${chaosSeeds[0]}..${chaosSeeds[chaosSeeds.length - 1]}, FaultyResource 1..8`);
const clean = chaos.violations === 0 && chaos.problems.length === 0 && leaks === 0 && hangs === 0 && wrong === 0 && fuzzFailures === 0 && memoryFlat && deviceFlat && countsConstant && run.runError === null && flagshipClean;
console.log(clean ? 'PASS' : 'FAIL');
// A stuck session from the stuck-consumer scenario may keep timers alive; the report is complete here.
process.exit(clean ? 0 : 1);
