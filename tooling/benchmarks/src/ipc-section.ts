import { availableParallelism } from 'node:os';
import { SPIN_MICROSECONDS, measureIpcTransport } from './ipc-transport.js';

/**
 * The `ipc` section of `pnpm bench`: every transport (hs shm parked and spinning, a plain Unix-socket copy,
 * ZeroMQ) at 4 KiB, 1 MiB and 8 MiB, a consumer child process per transport and size, one run; prints
 * the rows, ratios and the 4 KiB targets. Its own module so it also runs alone (a bundle of it).
 */
export async function runIpcSection(): Promise<void> {
  // Cross-process transport (@hs/ipc): a consumer child process per transport and size, one run.
  const IPC_SIZES = [4096, 1 << 20, 8 << 20];
  // Every transport gets the same paced warm-up first (JIT tiers, page faults), so the percentiles compare
  // steady states; a short warm-up measures V8's baseline tiers instead of the transport.
  const ipcCounts = (bytes: number) => ({
    warmup: Number(process.env.HS_BENCH_IPC_WARMUP_FRAMES ?? (bytes <= 4096 ? 20_000 : 300)),
    latency: Number(process.env.HS_BENCH_IPC_LATENCY_FRAMES ?? (bytes <= 4096 ? 20_000 : 300)),
    rate: Number(process.env.HS_BENCH_IPC_RATE_FRAMES ?? (bytes <= 4096 ? 20_000 : bytes <= 1 << 20 ? 2000 : 300)),
  });
  const us = (ns: number): string => `${(ns / 1000).toFixed(1).padStart(8)} us`;
  console.log('\ntensors across two processes (host memory; one-way latency paced one frame at a time after a paced warm-up, then streamed rate):');
  console.log('  hs shm = TopicPublisher -> ChannelRuntime (descriptor through the topic mailbox ring and doorbell, payload stays in the shared slot)');
  console.log(`  hs spin = the same, both ends waiting with { kind: 'spin', spinMicroseconds: ${SPIN_MICROSECONDS} } (poll the ring each event-loop turn, then park)`);
  console.log('  socket = the payload copied through a plain Unix socket; zmq = ZeroMQ Pair over ipc:// (baseline for ratios)');
  console.log(`  cpu = the consumer process's CPU time over its wall time (1.00 = one core busy); ${availableParallelism()} cores here`);
  for (const bytes of IPC_SIZES) {
    const shm = await measureIpcTransport('shm', bytes, ipcCounts(bytes));
    const spin = await measureIpcTransport('shm-spin', bytes, ipcCounts(bytes));
    const socket = await measureIpcTransport('socket', bytes, ipcCounts(bytes));
    const zmq = await measureIpcTransport('zmq', bytes, ipcCounts(bytes));
    const label = bytes >= 1 << 20 ? `${bytes / (1 << 20)} MiB` : `${bytes / 1024} KiB`;
    console.log(`  ${label}:`);
    for (const [name, f] of [['hs shm', shm], ['hs spin', spin], ['socket', socket], ['zmq', zmq]] as const) {
      console.log(
        `    ${name.padEnd(7)} p50 ${us(f.p50Ns)}  p99 ${us(f.p99Ns)}  rate ${f.rateHz.toFixed(0).padStart(7)} Hz  cpu ${f.consumerCpuShare.toFixed(2)}   p50 vs zmq ${(zmq.p50Ns / f.p50Ns).toFixed(2)}x faster, rate ${(f.rateHz / zmq.rateHz).toFixed(2)}x`,
      );
    }
    console.log(`    hs spin p50 vs socket ${(spin.p50Ns / socket.p50Ns).toFixed(2)}x, vs hs shm ${(spin.p50Ns / shm.p50Ns).toFixed(2)}x (lower is faster)`);
    if (bytes === 4096) {
      const met = (ok: boolean): string => (ok ? 'met' : 'NOT met');
      console.log(
        `    targets (issue 26, 4 KiB p50): hs shm <= socket ${met(shm.p50Ns <= socket.p50Ns)}, <= zmq/3 ${met(shm.p50Ns <= zmq.p50Ns / 3)}; hs spin <= 3 us ${met(spin.p50Ns <= 3000)} (wants >= 4 cores), its cpu ${spin.consumerCpuShare.toFixed(2)} of a core`,
      );
    }
    console.log(`    hs slot round trip (publish -> RELEASE -> slot free) median: shm ${us(shm.slotRoundTripNs ?? Number.NaN)}, spin ${us(spin.slotRoundTripNs ?? Number.NaN)}`);
  }
}
