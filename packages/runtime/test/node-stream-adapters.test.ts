import { Readable, Writable } from 'node:stream';
import { Graph, compile } from '@hs/compiler';
import { ErrorCode, HsError, MemoryKind, unwrap } from '@hs/streams';
import { describe, expect, it } from 'vitest';
import { ReadableSource, RunSession, WritableSink } from '../src/index.js';
import { rejectionOf } from './rejection.js';

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
    const metrics = await session.run();
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
    const outcome = await rejectionOf(session.run());
    expect(outcome.code).toBe(ErrorCode.InvalidArgument);
    session.dispose();
  });
});

/** Runs reader -> writer over `frames` frames of 8 bytes; returns the outcome and the slots still out. */
async function pipeFrames(frames: number, writable: Writable): Promise<{ code: ErrorCode; message: string; outstanding: number }> {
  const readable = Readable.from(
    (function* () {
      for (let i = 0; i < frames; i++) yield Buffer.alloc(8, i & 0xff);
    })(),
  );
  const graph = new Graph('closing-writable');
  const source = graph.add(new ReadableSource('reader', readable, { maxFrameBytes: 8 }));
  graph.addFlow(source.frames, graph.add(new WritableSink('writer', writable)).input, { queueDepth: 2 });
  const session = unwrap(RunSession.create(unwrap(compile(graph)), { backend: 'host' }));
  const outcome = await rejectionOf(session.run({ drainTimeoutMs: 2000 }));
  const outstanding = session.metrics().pools.reduce((sum, p) => sum + p.outstanding, 0);
  session.dispose();
  return { code: outcome.code, message: outcome.message, outstanding };
}

describe('Writables that close early', () => {
  it('fails the run with InvalidState when the Writable is destroyed mid-run, and returns every slot', async () => {
    let written = 0;
    const writable = new Writable({
      write(_chunk: Buffer, _encoding, callback) {
        written += 1;
        callback();
        if (written === 5) this.destroy();
      },
    });
    const { code, message, outstanding } = await pipeFrames(100, writable);
    expect(written).toBe(5);
    expect(code).toBe(ErrorCode.InvalidState);
    expect(message).toContain('closed early');
    expect(outstanding).toBe(0);
  });

  it('fails at once (no wait for drain/close) over a Writable already destroyed or ended', async () => {
    const destroyed = new Writable({ write: (_c, _e, cb) => cb() });
    destroyed.destroy();
    const ended = new Writable({ write: (_c, _e, cb) => cb() });
    ended.end();
    const unfinished = new Writable({ write: () => undefined }); // ended, but its first write never completes
    unfinished.write(Buffer.alloc(1));
    unfinished.end();
    for (const writable of [destroyed, ended, unfinished]) {
      const { code, message, outstanding } = await pipeFrames(10, writable);
      expect(code).toBe(ErrorCode.InvalidState);
      expect(message).toContain('closed early');
      expect(outstanding).toBe(0);
    }
  });
});

describe('adapter arguments', () => {
  it('fails the run with InvalidState when the Readable is destroyed before it ended', async () => {
    const readable = new Readable({ objectMode: true, read() {} });
    readable.push(Buffer.alloc(4));
    const graph = new Graph('premature-close');
    const source = graph.add(new ReadableSource('reader', readable, { maxFrameBytes: 4 }));
    graph.addFlow(source.frames, graph.add(new WritableSink('writer', slowWritable([]))).input);
    const session = unwrap(RunSession.create(unwrap(compile(graph)), { backend: 'host' }));
    const running = session.run();
    setTimeout(() => readable.destroy(), 5);
    const outcome = await rejectionOf(running);
    expect(outcome.code).toBe(ErrorCode.InvalidState);
    expect(outcome.message).toContain('premature close');
    session.dispose();
  });

  it('throws HsError InvalidArgument for wrong constructor arguments, naming what to pass', () => {
    const readable = new Readable({ objectMode: true, read() {} });
    const invalid = (make: () => unknown, words: string): void => {
      let thrown: unknown = null;
      try {
        make();
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(HsError);
      expect((thrown as HsError).code).toBe(ErrorCode.InvalidArgument);
      expect((thrown as HsError).message).toContain(words);
    };
    invalid(() => new (ReadableSource as unknown as new (n: string, r: Readable) => ReadableSource)('r', readable), 'options are required');
    invalid(() => new ReadableSource('r', null as unknown as Readable, { maxFrameBytes: 4 }), 'Node Readable');
    invalid(() => new WritableSink('w', {} as Writable), 'Node Writable');
    invalid(() => new WritableSink('w', null as unknown as Writable), 'Node Writable');
    // A device kind failed only at compile (DEVICE_BINDING_REQUIRED); the source writes with the host.
    invalid(() => new ReadableSource('r', readable, { maxFrameBytes: 4, memoryKind: MemoryKind.CudaDevice as MemoryKind.Host }), 'pinnedHost, host');
  });
});
