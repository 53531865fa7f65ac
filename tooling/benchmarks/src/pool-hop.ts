import { TensorPool } from '@hs/pool';
import { Device, HostBackend, MemoryKind, type Stream, unwrap } from '@hs/streams';
import { DType } from '@hs/tensor';

/** Nanoseconds per frame of each step of one producer -> consumer hop through a pool. */
export interface HopCosts {
  readonly allocate: number;
  readonly write: number;
  readonly commit: number;
  readonly emit: number;
  readonly receive: number;
  readonly release: number;
  /** Backend drain plus `retire()` polling, the part a real device does off the JS thread. */
  readonly retire: number;
  /** The whole hop without per-step timers. */
  readonly total: number;
}

interface HopRig {
  readonly backend: HostBackend;
  readonly pool: TensorPool;
  readonly producer: Stream;
  readonly consumer: Stream;
}

function makeRig(frameBytes: number): HopRig {
  const backend = new HostBackend({ scheduling: 'manual' });
  const device = Device.cuda(0);
  const producer = unwrap(backend.createStream(device, { label: 'producer' }));
  const consumer = unwrap(backend.createStream(device, { label: 'consumer' }));
  const pool = unwrap(
    TensorPool.materialize(backend, {
      name: 'bench.frames',
      memoryKind: MemoryKind.CudaDevice,
      device,
      slotCount: 4,
      slotByteSpan: frameBytes,
      maxRank: 1,
      dtype: DType.uint8,
      producerStream: producer,
    }),
  );
  return { backend, pool, producer, consumer };
}

/**
 * One hop exactly as the runtime performs it: allocate, write on the producer stream, commit (records
 * readiness), emit, receive (consumer lease, stream wait, release-stream registration), release (records
 * the release event), then drain the manual backend and retire. Throws on any error result.
 */
let lapStart = 0;

/** Adds the time since the previous lap to `times[i]` (no-op without a timing array). */
function lap(times: Float64Array | null, i: number): void {
  if (times === null) return;
  const now = performance.now();
  times[i]! += now - lapStart;
  lapStart = now;
}

function hop(rig: HopRig, shape: readonly number[], times: Float64Array | null): void {
  if (times !== null) lapStart = performance.now();
  const loan = unwrap(rig.pool.allocateTensor({ shape, dtype: DType.uint8 }));
  lap(times, 0);
  const guard = unwrap(loan.write(rig.producer));
  lap(times, 1);
  unwrap(guard.commit());
  lap(times, 2);
  const tensor = unwrap(loan.emit());
  lap(times, 3);
  const backing = tensor.backing!;
  unwrap(backing.acquireLease());
  unwrap(rig.backend.streamWaitEvent(rig.consumer, tensor.readinessEvent!));
  unwrap(backing.registerReleaseStream(rig.consumer));
  lap(times, 4);
  backing.releaseLease(rig.consumer);
  lap(times, 5);
  rig.backend.runUntilIdle();
  rig.pool.retire();
  lap(times, 6);
}

/** Measures per-step hop costs over `frames` frames after `warmup` frames. */
export function measurePoolHop(frames: number, frameBytes: number, warmup = 10_000): HopCosts {
  const rig = makeRig(frameBytes);
  const shape = [frameBytes];
  for (let i = 0; i < warmup; i++) hop(rig, shape, null);
  const times = new Float64Array(7);
  for (let i = 0; i < frames; i++) hop(rig, shape, times);
  const start = process.hrtime.bigint();
  for (let i = 0; i < frames; i++) hop(rig, shape, null);
  const total = Number(process.hrtime.bigint() - start) / frames;
  rig.pool.dispose();
  rig.backend.dispose();
  const ns = (ms: number): number => (ms * 1e6) / frames;
  return {
    allocate: ns(times[0]!),
    write: ns(times[1]!),
    commit: ns(times[2]!),
    emit: ns(times[3]!),
    receive: ns(times[4]!),
    release: ns(times[5]!),
    retire: ns(times[6]!),
    total,
  };
}

/** JS heap growth in bytes over `frames` hops, measured after warm-up with forced GCs around it. */
export function poolHopHeapGrowth(frames: number, frameBytes: number): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with node --expose-gc');
  const rig = makeRig(frameBytes);
  const shape = [frameBytes];
  for (let i = 0; i < 20_000; i++) hop(rig, shape, null);
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < frames; i++) hop(rig, shape, null);
  gc();
  const after = process.memoryUsage().heapUsed;
  rig.pool.dispose();
  rig.backend.dispose();
  return after - before;
}
