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

const dir = mkdtempSync(join(tmpdir(), 'hs-ipc-hostile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SLOT_STRIDE = 1024;
const SLOTS = 4;

/**
 * A fake publisher in this process (so SO_PEERCRED matches): sends a valid HELLO for a real segment, then
 * the given frames, and reports what the subscriber did.
 */
async function serveFrames(topic: string, frames: Uint8Array[]): Promise<{ received: number; code: ErrorCode | null }> {
  const segment = unwrap(SharedSegment.create({ name: `/hs.${process.getuid!()}.${process.pid}.f.${topic}`, byteSize: SLOTS * SLOT_STRIDE }));
  segment.bytes.fill(0xab);
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
      segmentName: segment.name,
      mailboxToken: null,
    });
    socket.on('error', () => undefined);
    socket.resume(); // read (and drop) RELEASE/GOODBYE so the connection can end
    socket.write(new Uint8Array(hello.buffer));
    for (const frame of frames) socket.write(frame);
  });
  await new Promise<void>((resolve) => server.listen(join(dir, `${topic}.sock`), resolve));
  const backend = new HostBackend();
  const channel = await ChannelRuntime.connect({ backend, topic, runtimeDirectory: dir });
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
  channel.close();
  backend.dispose();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  segment.unlink();
  expect([...segment.bytes.subarray(0, 16)].every((b) => b === 0xab)).toBe(true);
  segment.close();
  return { received, code };
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
  it('accepts valid descriptors and closes with ProtocolError on a replayed generation', async () => {
    const r = await serveFrames('replay', [validFrame(0, 1), validFrame(1, 1), validFrame(1, 1)]);
    expect(r).toEqual({ received: 2, code: ErrorCode.ProtocolError });
  });

  it('refuses a descriptor for a slot it still holds', async () => {
    // Both frames arrive before the first lease is released: the second names a held slot.
    const r = await serveFrames('held', [validFrame(2, 1), validFrame(2, 2)]);
    expect(r).toEqual({ received: 1, code: ErrorCode.ProtocolError });
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
