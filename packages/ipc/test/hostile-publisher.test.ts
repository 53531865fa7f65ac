import { createServer, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCode, HostBackend, HsError, unwrap } from '@hs/streams';
import { DType } from '@hs/tensor';
import {
  ChannelRuntime,
  DescriptorFlag,
  FRAME_BYTES,
  SharedSegment,
  WireMemoryKind,
  encodeDescriptor,
  encodeHello,
  ipcAvailability,
} from '../src/index.js';
import { sendHello } from '../src/hello-connection.js';

const dir = mkdtempSync(join(tmpdir(), 'hs-ipc-hostile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SLOT_STRIDE = 1024;
const SLOTS = 4;

/** A fake publisher's segment (named as this process's publisher would), filled with 0xab. */
function fakeSegment(topic: string): SharedSegment {
  const segment = unwrap(SharedSegment.createSealed({ label: `f.${topic}`, byteSize: SLOTS * SLOT_STRIDE }));
  segment.bytes.fill(0xab);
  return segment;
}

/**
 * Serves `topic` as a fake publisher in this process (so SO_PEERCRED matches): each connection is sent a
 * valid HELLO for `segment`, then `frames`; what it sends is read and dropped so the connection can end.
 */
async function serveHello(topic: string, segment: SharedSegment, frames: Uint8Array[], onSocket: (socket: Socket) => void = () => undefined) {
  const server = createServer((socket: Socket) => {
    const hello = new DataView(new ArrayBuffer(FRAME_BYTES));
    encodeHello(hello, 0, {
      topicId: 5,
      slotCount: SLOTS,
      slotStride: SLOT_STRIDE,
      segmentBytes: SLOTS * SLOT_STRIDE,
      memoryKind: WireMemoryKind.Host,
      maxRank: 2,
      producerPid: process.pid,
      mailboxToken: null,
    });
    socket.on('error', () => undefined);
    socket.resume();
    sendHello(socket, Buffer.from(hello.buffer), [segment.descriptor]);
    for (const frame of frames) socket.write(frame);
    onSocket(socket);
  });
  await new Promise<void>((resolve) => server.listen(join(dir, `${topic}.sock`), resolve));
  return server;
}

/**
 * Sends a valid HELLO, then the given frames, and reports what the subscriber did: descriptors it accepted,
 * leases it handed out (a rejected frame reclaims the ones still queued: the channel said goodbye), and the
 * error it ended with.
 */
async function serveFrames(topic: string, frames: Uint8Array[]): Promise<{ accepted: number; received: number; code: ErrorCode | null }> {
  const segment = fakeSegment(topic);
  const server = await serveHello(topic, segment, frames);
  const backend = new HostBackend();
  const channel = await ChannelRuntime.connect({ backend, topic, runtimeDirectory: dir });
  // The frames after HELLO arrive in one read on a later turn: let it happen before the first receive, so
  // they are all judged before any lease is handed out.
  await new Promise((resolve) => setTimeout(resolve, 30));
  let received = 0;
  let code: ErrorCode | null = null;
  for (;;) {
    const r = await Promise.race([channel.receive().catch((error: HsError) => error), new Promise<null>((resolve) => setTimeout(() => resolve(null), 50))]);
    if (r === null) break;
    if (r instanceof HsError) {
      code = r.code;
      break;
    }
    received++;
    // Whatever was accepted lies inside the segment and reads the pattern.
    const view = unwrap(r.tensor.hostView());
    expect(view.every((b) => b === 0xab)).toBe(true);
    unwrap(r.release());
  }
  const accepted = channel.receivedCount;
  channel.close();
  backend.dispose();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  segment.unlink();
  expect([...segment.bytes.subarray(0, 16)].every((b) => b === 0xab)).toBe(true);
  segment.close();
  return { accepted, received, code };
}

function validFrame(slot: number, generation: number): Uint8Array {
  const view = new DataView(new ArrayBuffer(FRAME_BYTES));
  encodeDescriptor(view, 0, {
    topicId: 5,
    slot,
    generation,
    fenceValue: 0,
    flags: DescriptorFlag.HostWriter,
    dtype: DType.uint8,
    shape: [16, 4],
    strides: [4, 1],
    byteOffset: 0,
    byteLength: 64,
  });
  return new Uint8Array(view.buffer);
}

describe.skipIf(!ipcAvailability().available)('ChannelRuntime against a hostile publisher', () => {
  it('accepts valid descriptors and closes with ProtocolError on a replayed generation, reclaiming what it still queued', async () => {
    // All three arrive in one read: the two valid ones are queued when the replay ends the channel.
    const r = await serveFrames('replay', [validFrame(0, 1), validFrame(1, 1), validFrame(1, 1)]);
    expect(r).toEqual({ accepted: 2, received: 0, code: ErrorCode.ProtocolError });
  });

  it('a connection that drops without a GOODBYE reclaims the lease held: its tensor returns InvalidState (topic, slot, why), release() is a no-op', async () => {
    const segment = fakeSegment('drop');
    const sockets: Socket[] = [];
    const server = await serveHello('drop', segment, [validFrame(1, 1)], (socket) => sockets.push(socket));
    const backend = new HostBackend();
    const channel = await ChannelRuntime.connect({ backend, topic: 'drop', runtimeDirectory: dir });
    const lease = await channel.receive();
    expect(unwrap(lease.tensor.hostView()).every((b) => b === 0xab)).toBe(true);
    for (const socket of sockets) socket.destroy(); // no GOODBYE: a publisher that dropped this subscriber, or died
    await expect(channel.receive()).rejects.toMatchObject({ code: ErrorCode.InvalidState, message: expect.stringContaining('went away') });
    const view = lease.tensor.hostView();
    expect(view.ok ? null : view.error.code).toBe(ErrorCode.InvalidState);
    expect(view.ok ? '' : view.error.message).toMatch(/topic drop slot 1.*dropped without a GOODBYE.*slot 1 of topic drop was reclaimed/);
    expect(lease.reclaimed).toBe(true);
    expect(lease.release().ok).toBe(true);
    channel.close();
    backend.dispose();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    segment.unlink();
    segment.close();
  });

  it('refuses a descriptor for a slot it still holds', async () => {
    // Both frames arrive before the first lease is released: the second names a held slot.
    const r = await serveFrames('held', [validFrame(2, 1), validFrame(2, 2)]);
    expect(r).toEqual({ accepted: 1, received: 0, code: ErrorCode.ProtocolError });
  });

  it('never crashes on mutated descriptors and only exposes bytes inside the segment (fast-check, fixed seed)', async () => {
    let typed = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 0, max: FRAME_BYTES - 1 }), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 6 }),
        async (edits) => {
          const frame = validFrame(1, 1);
          for (const [at, value] of edits) frame[at] = value;
          const r = await serveFrames(`fuzz${typed}`, [frame]);
          typed++;
          if (r.code !== null) expect([ErrorCode.ProtocolError, ErrorCode.NotSupported]).toContain(r.code);
        },
      ),
      { seed: 20261130, numRuns: 60 },
    );
    expect(typed).toBe(60);
  }, 120_000);

  it('refuses to connect inside an operator compute()', async () => {
    const { Graph, Operator, compile } = await import('@hs/compiler');
    const { RunSession } = await import('@hs/runtime');
    const { MemoryKind } = await import('@hs/streams');
    let refused: Promise<HsError | null> | null = null;
    class Inside extends Operator {
      out!: import('@hs/compiler').OutputPort;
      setup(spec: import('@hs/compiler').OperatorSpec): void {
        this.out = spec.output('out').producesTensor({
          representation: { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 1 },
          bounds: { maxByteSpan: 4 },
          storage: 'runtimePool',
        } as never);
      }
      compute(ctx: import('@hs/compiler').ExecutionContext): import('@hs/streams').Result<void> {
        refused = ChannelRuntime.connect({ backend: new HostBackend(), topic: 'anything', runtimeDirectory: dir }).then(
          () => null,
          (error: HsError) => error,
        );
        ctx.finish();
        return { ok: true, value: undefined };
      }
    }
    class Sink extends Operator {
      in!: import('@hs/compiler').InputPort;
      setup(spec: import('@hs/compiler').OperatorSpec): void {
        this.in = spec.input('in', { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 1 });
      }
      compute(): void {}
    }
    const graph = new Graph('inside');
    const a = graph.add(new Inside('inside'));
    const b = graph.add(new Sink('sink'));
    graph.addFlow(a.out, b.in);
    await unwrap(RunSession.create(unwrap(compile(graph)), { backend: new HostBackend() })).run();
    const result = await (refused as Promise<HsError | null> | null);
    expect(result).toBeInstanceOf(HsError);
    expect(result?.code).toBe(ErrorCode.InvalidState);
    expect(result?.detail).toContain('one graph, one vocabulary');
  });
});
