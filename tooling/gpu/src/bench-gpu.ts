// `pnpm bench:gpu`: hs against native CUDA baselines measured side by side in this run, as ratios.
// (a) per-hop overhead (record, wait, query) vs a C++ loop of the same calls; (b) pool borrow+return vs
// cudaMallocAsync/FreeAsync and cudaMalloc/Free (1 MiB); (c) a 256 MiB device-to-pinned copy through
// the backend, and Tensor.copyToHost of a 256 MiB tensor, vs raw cudaMemcpyAsync; (d) stream completion seen by
// JS (a 4-byte memset, then `await synchronizeStream`) vs a C++ host function on the same kind of stream.
// Prints a table and one JSON line.
import { loadCudaNative } from '@hs/cuda-native';
import { DType } from '@hs/tensor';
import { TensorPool } from '@hs/pool';
import { CudaBackend, Device, MemoryKind, unwrap } from '@hs/streams';
import { benchPointsToGrid } from './bench-points-to-grid.js';
import { benchDistributedPointsToGrid } from './bench-distributed-points-to-grid.js';

const MiB = 1 << 20;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

const loaded = loadCudaNative();
if (!loaded.ok || !loaded.hasDevice) {
  console.log(`bench:gpu skipped: ${loaded.ok ? loaded.deviceProblem : loaded.reason}`);
  process.exit(0);
}
const cuda = loaded.binding;
const backend = unwrap(CudaBackend.create());
const device = backend.devices[0] as Device;
const rows: { name: string; hsNs: number; baselineNs: number; baseline: string }[] = [];
// HS_BENCH_ONLY=points-to-grid runs the PointsToGrid rows alone; HS_BENCH_ONLY=copies the copy and completion rows
// alone. HS_CUDA_COMPLETION=host-function makes the backend learn of completions through host functions (the old path).
const pointsToGridOnly = process.env.HS_BENCH_ONLY === 'points-to-grid';
const copiesOnly = process.env.HS_BENCH_ONLY === 'copies';
const completionPath = process.env.HS_CUDA_COMPLETION === 'host-function' || cuda.notifyWhenDone === undefined ? 'host function' : 'completion waiter';
const percentile = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] as number;
const completionLines: string[] = [];

// (a) per hop
if (!pointsToGridOnly && !copiesOnly) {
  const producer = unwrap(backend.createStream(device, { label: 'producer' }));
  const consumer = unwrap(backend.createStream(device, { label: 'consumer' }));
  const ready = unwrap(backend.createEvent(device, { label: 'ready' }));
  const batch = 2000;
  const hs: number[] = [];
  const native: number[] = [];
  for (let round = 0; round < 30; round++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < batch; i++) {
      backend.recordEvent(ready, producer);
      backend.streamWaitEvent(consumer, ready);
      backend.queryEvent(ready);
    }
    hs.push(Number(process.hrtime.bigint() - t0) / batch);
    native.push(cuda.benchHops(batch) / batch);
  }
  await backend.synchronizeStream(consumer);
  rows.push({ name: 'per hop (record + wait + query)', hsNs: median(hs.slice(5)), baselineNs: median(native.slice(5)), baseline: 'C++ loop' });
}

// (b) pool borrow + return, 1 MiB slots
if (!pointsToGridOnly && !copiesOnly) {
  const producer = unwrap(backend.createStream(device, { label: 'pool producer' }));
  const pool = unwrap(TensorPool.materialize(backend, { name: 'bench', memoryKind: MemoryKind.CudaDevice, device, slotCount: 4, slotByteSpan: MiB, maxRank: 1, dtype: DType.uint8, producerStream: producer }));
  const request = { shape: [MiB], dtype: DType.uint8 };
  const n = 20000;
  const hs: number[] = [];
  for (let round = 0; round < 10; round++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) unwrap(pool.allocateTensor(request)).abandon();
    hs.push(Number(process.hrtime.bigint() - t0) / n);
  }
  const asyncNs: number[] = [];
  const mallocNs: number[] = [];
  for (let round = 0; round < 10; round++) asyncNs.push(cuda.benchMallocAsync(MiB, n) / n);
  for (let round = 0; round < 5; round++) mallocNs.push(cuda.benchMalloc(MiB, 200) / 200);
  const borrow = median(hs.slice(2));
  rows.push({ name: 'pool borrow + return (1 MiB)', hsNs: borrow, baselineNs: median(asyncNs.slice(2)), baseline: 'cudaMallocAsync + cudaFreeAsync' });
  rows.push({ name: 'pool borrow + return (1 MiB)', hsNs: borrow, baselineNs: median(mallocNs.slice(1)), baseline: 'cudaMalloc + cudaFree' });
  pool.dispose();
}

// (c) 256 MiB device -> pinned
if (!pointsToGridOnly) {
  const bytes = 256 * MiB;
  const s = unwrap(backend.createStream(device, { label: 'copy' }));
  const src = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device, byteSize: bytes }));
  const dst = unwrap(backend.allocate({ kind: MemoryKind.PinnedHost, device: Device.cpu(), byteSize: bytes }));
  unwrap(backend.memsetAsync(s, { memory: src, byteOffset: 0, byteLength: bytes, label: 'src' }, 1));
  await backend.synchronizeStream(s);
  const hs: number[] = [];
  const raw: number[] = [];
  for (let round = 0; round < 8; round++) {
    const t0 = process.hrtime.bigint();
    unwrap(backend.memcpyAsync(s, { memory: dst, byteOffset: 0, byteLength: bytes, label: 'dst' }, { memory: src, byteOffset: 0, byteLength: bytes, label: 'src' }));
    await backend.synchronizeStream(s);
    hs.push(Number(process.hrtime.bigint() - t0));
    raw.push(cuda.benchMemcpy(dst.address, src.address, bytes, 1));
  }
  const hsNs = median(hs.slice(2));
  const rawNs = median(raw.slice(2));
  rows.push({ name: `backend.memcpyAsync 256 MiB device->pinned (${(bytes / hsNs).toFixed(1)} vs ${(bytes / rawNs).toFixed(1)} GB/s)`, hsNs, baselineNs: rawNs, baseline: 'cudaMemcpyAsync + sync' });

  // Tensor.copyToHost of a committed 256 MiB pool tensor (readiness wait + copy + host wait), into the pinned
  // allocation's host view and into a JS-heap Uint8Array (page-locked by the backend at its second copy: the
  // steady state of repeat copies; the one-time registration is reported apart), against the same raw copy.
  const producer = unwrap(backend.createStream(device, { label: 'tensor producer' }));
  const pool = unwrap(TensorPool.materialize(backend, { name: 'copy bench', memoryKind: MemoryKind.CudaDevice, device, slotCount: 1, slotByteSpan: bytes, maxRank: 1, dtype: DType.uint8, producerStream: producer }));
  const loan = unwrap(pool.allocateTensor({ shape: [bytes], dtype: DType.uint8 }));
  const guard = unwrap(loan.write(producer));
  unwrap(backend.memsetAsync(producer, guard.range, 7));
  unwrap(guard.commit());
  const tensor = unwrap(loan.emit());
  unwrap(tensor.backing!.registerReleaseStream(s));
  unwrap(tensor.backing!.acquireLease());
  const targets = [
    { label: 'pinned host view', dst: unwrap(backend.hostView(dst)) },
    { label: 'JS-heap Uint8Array', dst: new Uint8Array(bytes) },
  ];
  for (const { label, dst: target } of targets) {
    const times: number[] = [];
    for (let round = 0; round < 8; round++) {
      const t0 = process.hrtime.bigint();
      await tensor.copyToHost(target, s);
      times.push(Number(process.hrtime.bigint() - t0));
    }
    if (target[0] !== 7 || target[bytes - 1] !== 7) throw new Error(`bench: Tensor.copyToHost into the ${label} did not copy the tensor's bytes`);
    const ns = median(times.slice(2));
    const registered = backend.hostArrayRegistrations();
    const registration = label.startsWith('JS-heap') ? `; registered once in ${(registered.registerNs / 1e6).toFixed(1)} ms, ${registered.arrays} array(s) locked` : '';
    rows.push({ name: `Tensor.copyToHost 256 MiB into ${label} (${(bytes / ns).toFixed(1)} vs ${(bytes / rawNs).toFixed(1)} GB/s${registration}; ${completionPath})`, hsNs: ns, baselineNs: rawNs, baseline: 'cudaMemcpyAsync + sync' });
  }
  unwrap(backend.releaseHostArray(targets[1]!.dst));
  tensor.backing!.releaseLease(s);
  await backend.synchronizeStream(s);
  pool.retire();
  pool.dispose();
}
// (d) stream completion seen by JS: enqueue a 4-byte memset, then await synchronizeStream; p50 and p99 over 2000
// reps, against the same memset followed by a C++ host function (and a C++ spin on cudaEventQuery) in this run.
if (!pointsToGridOnly && cuda.benchCompletion !== undefined) {
  const s = unwrap(backend.createStream(device, { label: 'completion' }));
  const word = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device, byteSize: 4 }));
  const range = { memory: word, byteOffset: 0, byteLength: 4, label: 'word' };
  const reps = 2000;
  const hs: number[] = [];
  for (let i = 0; i < 200 + reps; i++) {
    const t0 = process.hrtime.bigint();
    unwrap(backend.memsetAsync(s, range, i & 0xff));
    await backend.synchronizeStream(s);
    if (i >= 200) hs.push(Number(process.hrtime.bigint() - t0));
  }
  cuda.benchCompletion(200, 0);
  const hostFunction = Array.from(cuda.benchCompletion(reps, 0));
  const spin = Array.from(cuda.benchCompletion(reps, 1));
  const p50 = percentile(hs, 0.5);
  rows.push({ name: `stream completion seen by JS, p50 (${completionPath})`, hsNs: p50, baselineNs: percentile(hostFunction, 0.5), baseline: 'memset + C++ host function' });
  rows.push({ name: `stream completion seen by JS, p99 (${completionPath})`, hsNs: percentile(hs, 0.99), baselineNs: percentile(hostFunction, 0.99), baseline: 'memset + C++ host function' });
  rows.push({ name: `stream completion seen by JS, p50 (${completionPath})`, hsNs: p50, baselineNs: percentile(spin, 0.5), baseline: 'memset + C++ cudaEventQuery spin' });
  completionLines.push(`stream completion seen by JS (${completionPath}): p50 ${(p50 / 1e3).toFixed(1)} us, target p50 <= 20 us: ${p50 <= 20e3 ? 'met' : 'not met'}`);
  unwrap(backend.free(word));
}
const pointsToGridLines = copiesOnly ? [] : await benchPointsToGrid(backend, cuda, device);
const distributedLines = copiesOnly ? [] : await benchDistributedPointsToGrid(backend);
backend.dispose();

console.log(`device: ${cuda.deviceProperties(0).name}`);
console.log('| measurement | hs | baseline | baseline value | hs / baseline |');
console.log('|---|---|---|---|---|');
const fmt = (ns: number): string => (ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : ns >= 1e3 ? `${(ns / 1e3).toFixed(2)} us` : `${ns.toFixed(0)} ns`);
for (const r of rows) console.log(`| ${r.name} | ${fmt(r.hsNs)} | ${r.baseline} | ${fmt(r.baselineNs)} | ${(r.hsNs / r.baselineNs).toFixed(2)} |`);
console.log(`completion path: ${completionPath}`);
console.log('targets: Tensor.copyToHost 256 MiB >= 98 % of the raw copy into the pinned view (hs / baseline <= 1.02), >= 50 % into a JS-heap array (<= 2.00); stream completion seen by JS p50 <= 20 us');
for (const line of completionLines) console.log(line);
console.log(JSON.stringify({ bench: 'gpu', rows }));
if (!copiesOnly) console.log('PointsToGrid (OnIndex, world f32 points, voxel size 1, full checksum; M/s = million points per second):');
for (const line of pointsToGridLines) console.log(line);
if (!copiesOnly) console.log('distributedPointsToGrid (OnIndex, world f32 host points in 8 uniform blocks of 8 root tiles, voxel size 1, full checksum) vs the one-GPU build of the same host points:');
for (const line of distributedLines) console.log(line);
