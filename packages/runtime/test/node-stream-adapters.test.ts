import { Readable, Writable } from 'node:stream';
import { Graph, compile } from '@hs/compiler';
import { ErrorCode, HsError, unwrap } from '@hs/streams';
import { describe, expect, it } from 'vitest';
import { ReadableSource, RunSession, WritableSink } from '../src/index.js';

const FRAME_BYTES = 64 * 1024;

/** A slow Writable: each chunk completes on a later macrotask; records every chunk's first byte. */
function slowWritable(received: number[]): Writable {
  return new Writable({
    highWaterMark: FRAME_BYTES,
    write(chunk: Buffer, _encoding, callback) {
      received.push(chunk[0]!);
      setImmediate(callback);
    },
  });
}

describe('Node stream adapters', () => {
  it('pipes a Readable of frames through a graph into a slow Writable with bounded memory', async () => {
    const frames = 1600; // 100 MiB in total
    let pulled = 0;
    const received: number[] = [];
    let maxInFlight = 0;
    const base = process.memoryUsage();
    let peak = 0;
    const readable = Readable.from(
      (function* () {
        for (let i = 0; i < frames; i++) {
          pulled += 1;
          maxInFlight = Math.max(maxInFlight, pulled - received.length);
          if (i % 32 === 0) {
            const m = process.memoryUsage();
            peak = Math.max(peak, m.heapUsed + m.arrayBuffers - base.heapUsed - base.arrayBuffers);
          }
          yield Buffer.alloc(FRAME_BYTES, i & 0xff);
        }
      })(),
      { highWaterMark: 4 },
    );
    const graph = new Graph('node-streams');
    const source = graph.add(new ReadableSource('reader', readable, { maxFrameBytes: FRAME_BYTES }));
    const sink = graph.add(new WritableSink('writer', slowWritable(received)));
    graph.addFlow(source.frames, sink.input, { queueDepth: 2 });
    const plan = unwrap(compile(graph));
    expect(plan.edge('reader.frames->writer.frames')?.hostWait).toBe(false);
    const session = unwrap(RunSession.create(plan, { backend: 'host' }));
    const metrics = unwrap(await session.run());
    session.dispose();
    expect(received).toEqual(Array.from({ length: frames }, (_, i) => i & 0xff));
    // Frames pulled from the generator but not yet written: the Readable's buffer, the queue, the pool
    // slots and the Writable's buffer; nowhere near the 1600 an unbounded pipe would hold.
    expect(maxInFlight).toBeLessThanOrEqual(16);
    // Generous: unbounded, the inputs and their copies would reach 200 MiB; garbage awaiting collection counts here too.
    expect(peak).toBeLessThan(96 * 1024 * 1024);
    expect(metrics.pools[0]?.outstanding).toBe(0);
    console.log(`node-stream adapters: max frames in flight ${maxInFlight}, peak heap+arrayBuffers growth ${(peak / 2 ** 20).toFixed(1)} MiB`);
  });

  it('ends the run with the Readable error, and refuses byte-mode Readables and oversized frames', async () => {
    expect(() => new ReadableSource('bytes', Readable.from(Buffer.alloc(4), { objectMode: false }), { maxFrameBytes: 4 })).toThrow(HsError);
    const readable = new Readable({ objectMode: true, read() {} });
    readable.push(Buffer.alloc(8));
    const graph = new Graph('oversized');
    const source = graph.add(new ReadableSource('reader', readable, { maxFrameBytes: 4 }));
    graph.addFlow(source.frames, graph.add(new WritableSink('writer', slowWritable([]))).input);
    const session = unwrap(RunSession.create(unwrap(compile(graph)), { backend: 'host' }));
    const outcome = await session.run();
    expect(outcome.ok ? null : outcome.error.code).toBe(ErrorCode.InvalidArgument);
    session.dispose();
  });
});
