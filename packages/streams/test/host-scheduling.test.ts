import { describe, expect, it } from 'vitest';
import { Device, ErrorCode, HostBackend, MemoryKind, unwrap, type Stream } from '../src/index.js';

const cuda0 = Device.cuda(0);

function tracedStreams(backend: HostBackend, streams: number, opsPerStream: number, trace: string[]): Stream[] {
  const made: Stream[] = [];
  for (let s = 0; s < streams; s++) {
    const stream = unwrap(backend.createStream(cuda0, { label: `s${s}` }));
    made.push(stream);
    for (let i = 0; i < opsPerStream; i++) unwrap(backend.launchHostFunc(stream, () => trace.push(`s${s}:${i}`)));
  }
  return made;
}

function manualTrace(seed: number): string[] {
  const backend = new HostBackend({ scheduling: 'manual', seed });
  const trace: string[] = [];
  tracedStreams(backend, 3, 8, trace);
  backend.runUntilIdle();
  backend.dispose();
  return trace;
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('manual scheduling', () => {
  it('runs nothing until step() or runUntilIdle()', async () => {
    const backend = new HostBackend({ scheduling: 'manual' });
    const trace: string[] = [];
    tracedStreams(backend, 2, 3, trace);
    await flush();
    await flush();
    expect(trace).toEqual([]);
    expect(backend.step()).toBe(true);
    expect(trace).toHaveLength(1);
    expect(backend.runUntilIdle()).toBe(5);
    expect(trace).toHaveLength(6);
    expect(backend.step()).toBe(false);
    expect(backend.runUntilIdle()).toBe(0);
    backend.dispose();
  });

  it('resolves synchronize promises only when stepping completes the awaited work', async () => {
    const backend = new HostBackend({ scheduling: 'manual' });
    const s = unwrap(backend.createStream(cuda0));
    const e = unwrap(backend.createEvent(cuda0));
    unwrap(backend.launchHostFunc(s, () => undefined));
    unwrap(backend.recordEvent(e, s));
    unwrap(backend.launchHostFunc(s, () => undefined));
    let eventDone: 'resolved' | null = null;
    let streamDone: 'resolved' | null = null;
    const waits = [backend.synchronizeEvent(e).then(() => (eventDone = 'resolved')), backend.synchronizeStream(s).then(() => (streamDone = 'resolved'))];
    await flush();
    expect(eventDone).toBeNull();
    expect(backend.queryEvent(e)).toBe(false);
    expect(backend.step(s)).toBe(true);
    await flush();
    expect(eventDone).toBe('resolved');
    expect(streamDone).toBeNull();
    expect(backend.step(s)).toBe(true);
    await flush();
    expect(streamDone).toBe('resolved');
    await Promise.all(waits);
    backend.dispose();
  });

  it('a wait stalls its stream until the captured position completes, ignoring later re-records', () => {
    const backend = new HostBackend({ scheduling: 'manual' });
    const a = unwrap(backend.createStream(cuda0, { label: 'a' }));
    const b = unwrap(backend.createStream(cuda0, { label: 'b' }));
    const e = unwrap(backend.createEvent(cuda0));
    const trace: string[] = [];
    unwrap(backend.launchHostFunc(a, () => trace.push('a1')));
    unwrap(backend.recordEvent(e, a));
    unwrap(backend.streamWaitEvent(b, e));
    unwrap(backend.launchHostFunc(b, () => trace.push('b')));
    unwrap(backend.launchHostFunc(a, () => trace.push('a2')));
    unwrap(backend.recordEvent(e, a)); // re-record: must not delay b's existing wait
    expect(backend.step(b)).toBe(false); // blocked on a1
    expect(backend.step(a)).toBe(true); // a1
    expect(backend.queryEvent(e)).toBe(false); // the event now captures a2
    expect(backend.step(b)).toBe(true); // the wait
    expect(backend.step(b)).toBe(true); // b runs while a2 is still queued
    expect(trace).toEqual(['a1', 'b']);
    expect(backend.step(a)).toBe(true);
    expect(backend.queryEvent(e)).toBe(true);
    backend.dispose();
  });

  it('refuses step() from inside a host function', async () => {
    const backend = new HostBackend({ scheduling: 'manual' });
    const s = unwrap(backend.createStream(cuda0));
    unwrap(backend.launchHostFunc(s, () => backend.step()));
    backend.runUntilIdle();
    await expect(backend.synchronizeStream(s)).rejects.toMatchObject({
      name: 'HsError',
      code: ErrorCode.DeviceError,
      message: expect.stringMatching(/InvalidState.*step\(\)/),
    });
    backend.dispose();
  });

  it('runs work that host functions enqueue in the same drain', () => {
    const backend = new HostBackend({ scheduling: 'manual' });
    const s = unwrap(backend.createStream(cuda0));
    const t = unwrap(backend.createStream(cuda0));
    const trace: string[] = [];
    unwrap(backend.launchHostFunc(s, () => {
      trace.push('outer');
      unwrap(backend.launchHostFunc(t, () => trace.push('inner')));
    }));
    expect(backend.runUntilIdle()).toBe(2);
    expect(trace).toEqual(['outer', 'inner']);
    backend.dispose();
  });
});

describe('seeded interleaving', () => {
  it('reproduces the same interleaving for the same seed', () => {
    expect(manualTrace(42)).toEqual(manualTrace(42));
    expect(manualTrace(7)).toEqual(manualTrace(7));
  });

  it('gives different interleavings for different seeds while keeping stream order', () => {
    const traces = [1, 2, 3, 4, 5, 6].map(manualTrace);
    expect(new Set(traces.map((t) => t.join(','))).size).toBeGreaterThan(1);
    for (const trace of traces) {
      for (let s = 0; s < 3; s++) {
        expect(trace.filter((x) => x.startsWith(`s${s}:`))).toEqual(Array.from({ length: 8 }, (_, i) => `s${s}:${i}`));
      }
    }
  });

  it('interleaves streams (not one stream at a time) under a seed', () => {
    const trace = manualTrace(3);
    const switches = trace.filter((x, i) => i > 0 && x.slice(0, 2) !== trace[i - 1]!.slice(0, 2)).length;
    expect(switches).toBeGreaterThan(2);
  });

  it('reproduces a seeded interleaving in auto mode too', async () => {
    const run = async (seed: number): Promise<string[]> => {
      const backend = new HostBackend({ seed });
      const trace: string[] = [];
      const streams = tracedStreams(backend, 3, 8, trace);
      for (const s of streams) await backend.synchronizeStream(s);
      backend.dispose();
      return trace;
    };
    const first = await run(99);
    expect(await run(99)).toEqual(first);
    expect(first).toHaveLength(24);
  });
});

describe('auto scheduling', () => {
  it('never runs work inside the enqueue call, and runs it without any host wait', async () => {
    const backend = new HostBackend();
    const s = unwrap(backend.createStream(cuda0));
    const mem = unwrap(backend.allocate({ kind: MemoryKind.PinnedHost, device: Device.cpu(), byteSize: 4 }));
    unwrap(backend.memsetAsync(s, { memory: mem, byteOffset: 0, byteLength: 4, label: 'x' }, 3));
    expect([...unwrap(backend.hostView(mem))]).toEqual([0, 0, 0, 0]);
    await flush();
    await flush();
    expect([...unwrap(backend.hostView(mem))]).toEqual([3, 3, 3, 3]);
    backend.dispose();
  });

  it('drains a long cross-stream ping-pong', async () => {
    const backend = new HostBackend();
    const a = unwrap(backend.createStream(cuda0, { label: 'a' }));
    const b = unwrap(backend.createStream(cuda0, { label: 'b' }));
    const ea = unwrap(backend.createEvent(cuda0));
    const eb = unwrap(backend.createEvent(cuda0));
    let counter = 0;
    const trace: number[] = [];
    for (let i = 0; i < 500; i++) {
      unwrap(backend.streamWaitEvent(a, eb));
      unwrap(backend.launchHostFunc(a, () => trace.push(counter++)));
      unwrap(backend.recordEvent(ea, a));
      unwrap(backend.streamWaitEvent(b, ea));
      unwrap(backend.launchHostFunc(b, () => trace.push(counter++)));
      unwrap(backend.recordEvent(eb, b));
    }
    await backend.synchronizeEvent(eb);
    expect(trace).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    backend.dispose();
  });
});

describe('mixing step() with auto scheduling', () => {
  it('still runs work that a stepped host function enqueued', async () => {
    const backend = new HostBackend();
    const s = unwrap(backend.createStream(cuda0));
    const t = unwrap(backend.createStream(cuda0));
    const trace: string[] = [];
    unwrap(backend.launchHostFunc(s, () => {
      trace.push('outer');
      unwrap(backend.launchHostFunc(t, () => trace.push('inner')));
    }));
    expect(backend.step(s)).toBe(true);
    expect(trace).toEqual(['outer']);
    await backend.synchronizeStream(t);
    expect(trace).toEqual(['outer', 'inner']);
    backend.dispose();
  });
});
