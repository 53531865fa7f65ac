// Consumer process of the IPC transport benchmark (see ipc-transport.ts). One transport and one payload
// size per process. Each frame carries the producer's CLOCK_MONOTONIC send time (ns, float64) in its first
// 8 bytes; the consumer records one-way latency, acknowledges every frame (shm: RELEASE, socket/zmq: one
// byte) and, after `warmupFrames + latencyFrames` paced frames, counts `rateFrames` streamed ones. The first
// `warmupFrames` paced frames warm up both processes (JIT tiers, page faults) and are not counted, so the
// percentiles describe the steady state of every transport alike. Prints one JSON line, with the share of
// one core this process used from ready to the last frame (process.cpuUsage over wall time).
// Args: transport(shm|shm-spin|socket|zmq) endpoint payloadBytes warmupFrames latencyFrames rateFrames
// shm and shm-spin: endpoint is `directory|topic`; shm-spin adds `|spinMicroseconds`, the window ChannelRuntime
// polls its mailbox ring for (once per event-loop turn) before it parks on its doorbell.
import { createConnection } from 'node:net';
import { HostBackend, unwrap } from '@hs/streams';
import { ChannelRuntime } from '@hs/ipc';
import * as zmq from 'zeromq';

const [transport, endpoint, bytesText, warmupText, latencyText, rateText] = process.argv.slice(2) as [string, string, string, string, string, string];
const payloadBytes = Number(bytesText);
const warmup = Number(warmupText);
const pacedFrames = warmup + Number(latencyText);
const rateFrames = Number(rateText);
const total = pacedFrames + rateFrames;
const latencies = new Float64Array(pacedFrames - warmup);
let received = 0;
let rateStart = 0;
const now = (): number => Number(process.hrtime.bigint());
/** CPU and wall clock when the consumer said it is ready. */
let cpuStart = process.cpuUsage();
let wallStart = now();
function ready(): void {
  cpuStart = process.cpuUsage();
  wallStart = now();
  console.log(JSON.stringify({ ready: true }));
}

function record(sentNs: number): boolean {
  const t = now();
  if (received >= warmup && received < pacedFrames) latencies[received - warmup] = t - sentNs;
  if (received === pacedFrames) rateStart = t;
  received++;
  return received === total;
}

function report(): void {
  const sorted = Array.from(latencies).sort((a, b) => a - b);
  const pick = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
  const end = now();
  const rateSeconds = (end - rateStart) / 1e9;
  const cpu = process.cpuUsage(cpuStart);
  const consumerCpuShare = ((cpu.user + cpu.system) * 1000) / (end - wallStart);
  console.log(JSON.stringify({ p50Ns: pick(0.5), p99Ns: pick(0.99), rateHz: (rateFrames - 1) / rateSeconds, consumerCpuShare }));
}

if (transport === 'shm' || transport === 'shm-spin') {
  const [dir, topic, spinText] = endpoint.split('|') as [string, string, string | undefined];
  const backend = new HostBackend();
  const wait = transport === 'shm-spin' ? ({ kind: 'spin', spinMicroseconds: Number(spinText) } as const) : ({ kind: 'park' } as const);
  const channel = await ChannelRuntime.connect({ backend, topic, runtimeDirectory: dir, connectTimeoutMs: 10_000, wait });
  ready();
  for (;;) {
    const lease = await channel.receive();
    const view = unwrap(lease.tensor.hostView()); // zero copy: a view of the producer's slot
    const done = record(new DataView(view.buffer, view.byteOffset, 8).getFloat64(0, true));
    unwrap(lease.release());
    if (done) break;
  }
  report();
  channel.close();
  backend.dispose();
} else if (transport === 'socket') {
  const socket = createConnection(endpoint);
  socket.setNoDelay(true);
  const frame = Buffer.alloc(payloadBytes);
  const ack = Buffer.from([1]);
  let filled = 0;
  socket.on('connect', () => ready());
  socket.on('data', (chunk: Buffer) => {
    let at = 0;
    while (at < chunk.length) {
      const n = Math.min(payloadBytes - filled, chunk.length - at);
      chunk.copy(frame, filled, at, at + n); // the receiving copy a byte stream needs
      filled += n;
      at += n;
      if (filled === payloadBytes) {
        filled = 0;
        const done = record(frame.readDoubleLE(0));
        socket.write(ack);
        if (done) {
          report();
          socket.end();
          return;
        }
      }
    }
  });
} else {
  const pair = new zmq.Pair();
  pair.connect(endpoint);
  ready();
  const ack = Buffer.from([1]);
  for (;;) {
    const [message] = await pair.receive();
    const done = record((message as Buffer).readDoubleLE(0));
    await pair.send(ack);
    if (done) break;
  }
  report();
  pair.close();
}
