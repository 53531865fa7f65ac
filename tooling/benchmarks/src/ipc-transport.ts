import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ErrorCode, HostBackend, MemoryKind, unwrap } from '@hs/streams';
import { DType } from '@hs/tensor';
import { TopicPublisher } from '@hs/ipc';
import * as zmq from 'zeromq';

/** What the consumer process measured for one transport and payload size. */
export interface TransportFigures {
  /** One-way latency (producer send to consumer receive), paced one frame at a time, in ns. */
  readonly p50Ns: number;
  readonly p99Ns: number;
  /** Frames per second the consumer received while the producer streamed. */
  readonly rateHz: number;
  /** shm only: median time from publish() until the slot is free again (descriptor + RELEASE), in ns. */
  readonly slotRoundTripNs?: number;
  /** Share of one core the consumer process used from ready to its last frame (CPU time / wall time). */
  readonly consumerCpuShare: number;
}

/** shm-spin: the shm path with both ends spinning for `SPIN_MICROSECONDS` before they park on their doorbell. */
export type IpcTransport = 'shm' | 'shm-spin' | 'socket' | 'zmq';

/** The spin window of the shm-spin transport (consumer and the publisher's release rings), in microseconds; `HS_BENCH_IPC_SPIN_US` overrides it. */
export const SPIN_MICROSECONDS = Number(process.env.HS_BENCH_IPC_SPIN_US ?? 100);

/**
 * The consumer: ipc-peer.ts through tsx, or `HS_BENCH_IPC_PEER`, a prebuilt (bundled) peer run by plain node
 * on a machine without tsx or the sources.
 */
const peerCommand: readonly string[] = process.env.HS_BENCH_IPC_PEER ? [process.env.HS_BENCH_IPC_PEER] : ['--import', 'tsx', fileURLToPath(new URL('./ipc-peer.ts', import.meta.url))];
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const now = (): number => Number(process.hrtime.bigint());

/** Frames of one measurement: paced warm-up (not counted), paced latency samples, then the streamed rate. */
export interface IpcFrameCounts {
  readonly warmup: number;
  readonly latency: number;
  readonly rate: number;
}

function startPeer(transport: IpcTransport, endpoint: string, bytes: number, counts: IpcFrameCounts) {
  const child = spawn(process.execPath, [...peerCommand, transport, endpoint, String(bytes), String(counts.warmup), String(counts.latency), String(counts.rate)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let buffered = '';
  const lines: Record<string, number | boolean>[] = [];
  const waiters: (() => void)[] = [];
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      lines.push(JSON.parse(buffered.slice(0, nl)));
      buffered = buffered.slice(nl + 1);
      for (const w of waiters.splice(0)) w();
    }
  });
  const next = async (): Promise<Record<string, number | boolean>> => {
    while (lines.length === 0) await new Promise<void>((resolve) => waiters.push(resolve));
    return lines.shift()!;
  };
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return { next, exited };
}

async function viaSharedMemory(bytes: number, counts: IpcFrameCounts, spin: boolean): Promise<TransportFigures> {
  const pacedFrames = counts.warmup + counts.latency;
  const rateFrames = counts.rate;
  const dir = mkdtempSync(join(tmpdir(), 'hs-bench-ipc-'));
  const backend = new HostBackend();
  const topic = `bench-${bytes}`;
  const wait = spin ? ({ kind: 'spin', spinMicroseconds: SPIN_MICROSECONDS } as const) : ({ kind: 'park' } as const);
  const pub = await TopicPublisher.create({ backend, topic, memoryKind: MemoryKind.Host, slotCount: 16, slotByteSpan: bytes, maxRank: 1, runtimeDirectory: dir, wait });
  const peer = spin ? startPeer('shm-spin', `${dir}|${topic}|${SPIN_MICROSECONDS}`, bytes, counts) : startPeer('shm', `${dir}|${topic}`, bytes, counts);
  await peer.next();
  while (pub.subscriberCount === 0) await tick();
  const roundTrips: number[] = [];
  const send = (): boolean => {
    const loan = pub.pool.allocateTensor({ shape: [bytes], dtype: DType.uint8 });
    if (!loan.ok) {
      if (loan.error.code !== ErrorCode.ResourceExhausted) throw loan.error;
      return false;
    }
    const guard = unwrap(loan.value.write(null));
    const view = unwrap(guard.tensor.mutableHostView());
    unwrap(guard.commit());
    const tensor = unwrap(loan.value.emit());
    // Only the 8-byte send stamp is written: the payload itself is never copied on this path.
    new DataView(view.buffer, view.byteOffset, 8).setFloat64(0, now(), true);
    unwrap(pub.publish(tensor));
    return true;
  };
  for (let i = 0; i < pacedFrames; i++) {
    const started = now();
    send();
    if (pub.occupancy !== 0) await once(pub, 'slotsReturned');
    if (i >= counts.warmup) roundTrips.push(now() - started);
  }
  for (let i = 0; i < rateFrames; ) {
    if (send()) i++;
    else await once(pub, 'slotsReturned'); // the pool is exhausted: resume when a RELEASE frees a slot
  }
  const figures = (await peer.next()) as unknown as TransportFigures;
  await peer.exited;
  await pub.close();
  backend.dispose();
  rmSync(dir, { recursive: true, force: true });
  roundTrips.sort((a, b) => a - b);
  return { ...figures, slotRoundTripNs: roundTrips[Math.floor(roundTrips.length / 2)] as number };
}

async function viaUnixSocket(bytes: number, counts: IpcFrameCounts): Promise<TransportFigures> {
  const pacedFrames = counts.warmup + counts.latency;
  const rateFrames = counts.rate;
  const dir = mkdtempSync(join(tmpdir(), 'hs-bench-sock-'));
  const path = join(dir, 'copy.sock');
  const connected = new Promise<Socket>((resolve) => {
    const server = createServer((socket) => {
      server.close();
      resolve(socket);
    });
    server.listen(path);
  });
  const peer = startPeer('socket', path, bytes, counts);
  const socket = await connected;
  socket.setNoDelay(true);
  await peer.next();
  let acks = 0;
  let ackWaiter: (() => void) | null = null;
  socket.on('data', (chunk: Buffer) => {
    acks += chunk.length;
    ackWaiter?.();
  });
  const frame = Buffer.alloc(bytes, 7);
  for (let i = 0; i < pacedFrames; i++) {
    frame.writeDoubleLE(now(), 0);
    socket.write(frame);
    while (acks <= i) await new Promise<void>((resolve) => (ackWaiter = resolve));
  }
  for (let i = 0; i < rateFrames; i++) {
    frame.writeDoubleLE(now(), 0);
    // write() keeps a reference to the buffer until it is flushed: send a copy, as a producer would.
    if (!socket.write(Buffer.from(frame))) await new Promise<void>((resolve) => socket.once('drain', () => resolve()));
  }
  const figures = (await peer.next()) as unknown as TransportFigures;
  await peer.exited;
  socket.destroy();
  rmSync(dir, { recursive: true, force: true });
  return figures;
}

async function viaZeroMq(bytes: number, counts: IpcFrameCounts): Promise<TransportFigures> {
  const pacedFrames = counts.warmup + counts.latency;
  const rateFrames = counts.rate;
  const dir = mkdtempSync(join(tmpdir(), 'hs-bench-zmq-'));
  const endpoint = `ipc://${join(dir, 'zmq.ipc')}`;
  const pair = new zmq.Pair();
  await pair.bind(endpoint);
  const peer = startPeer('zmq', endpoint, bytes, counts);
  await peer.next();
  const frame = Buffer.alloc(bytes, 7);
  for (let i = 0; i < pacedFrames; i++) {
    frame.writeDoubleLE(now(), 0);
    await pair.send(frame);
    await pair.receive();
  }
  const drained = (async () => {
    for (let i = 0; i < rateFrames; i++) await pair.receive();
  })();
  for (let i = 0; i < rateFrames; i++) {
    frame.writeDoubleLE(now(), 0);
    await pair.send(frame);
  }
  await drained;
  const figures = (await peer.next()) as unknown as TransportFigures;
  await peer.exited;
  pair.close();
  rmSync(dir, { recursive: true, force: true });
  return figures;
}

/**
 * Measures one transport between this process and a consumer child process: `counts.warmup` paced frames
 * that are not counted, `counts.latency` paced frames (one-way latency percentiles; for shm also the slot
 * round trip), then `counts.rate` streamed ones (rate).
 */
export function measureIpcTransport(transport: IpcTransport, bytes: number, counts: IpcFrameCounts): Promise<TransportFigures> {
  if (transport === 'shm' || transport === 'shm-spin') return viaSharedMemory(bytes, counts, transport === 'shm-spin');
  if (transport === 'socket') return viaUnixSocket(bytes, counts);
  return viaZeroMq(bytes, counts);
}
