import { describe, expect, it, vi } from 'vitest';
import { Device, HostBackend, MemoryKind, unwrap, type DeviceMemory, type MemoryRange, type Stream } from '../src/index.js';
import type { StreamOrderingChecker } from '../src/ordering/ordering-checker.js';

const cuda0 = Device.cuda(0);
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function setup(options: ConstructorParameters<typeof HostBackend>[0] = {}) {
  const backend = new HostBackend({ orderingChecker: true, ...options });
  const stream = (label: string): Stream => unwrap(backend.createStream(cuda0, { label }));
  const memory = (byteSize: number, kind = MemoryKind.CudaDevice, label = 'pool backing'): DeviceMemory =>
    unwrap(backend.allocate({ kind, device: kind === MemoryKind.CudaDevice || kind === MemoryKind.CudaManaged ? cuda0 : Device.cpu(), byteSize, label }));
  const range = (m: DeviceMemory, label: string, byteOffset = 0, byteLength = m.byteSize): MemoryRange => ({ memory: m, byteOffset, byteLength, label });
  const read = (s: Stream, r: MemoryRange): void =>
    unwrap(backend.launchKernel(s, { name: 'hs.test.read', reads: [r], writes: [], params: [], host: () => undefined }));
  const checker = backend.orderingChecker!;
  return { backend, stream, memory, range, read, checker };
}

describe('ordering checker', () => {
  it('reports a planted missing wait, naming both streams and the tensor', () => {
    const { backend, stream, memory, range, read, checker } = setup();
    const producer = stream('grayscale');
    const consumer = stream('blur');
    const frame = range(memory(1024), 'grayscale.gray[slot 0]');
    unwrap(backend.memsetAsync(producer, frame, 1));
    read(consumer, frame); // no streamWaitEvent on the readiness event
    expect(checker.violations).toHaveLength(1);
    const v = checker.violations[0]!;
    expect(v.hazard).toBe('read-after-write');
    expect(v.earlier).toEqual({ stream: 'grayscale', rangeLabel: 'grayscale.gray[slot 0]', operation: 'memset', access: 'write' });
    expect(v.later).toEqual({ stream: 'blur', rangeLabel: 'grayscale.gray[slot 0]', operation: 'kernel hs.test.read', access: 'read' });
    expect(v.memoryLabel).toBe('pool backing');
    expect([v.byteOffset, v.byteLength]).toEqual([0, 1024]);
    expect(v.message).toContain('read-after-write');
    expect(v.message).toContain('"grayscale"');
    expect(v.message).toContain('"blur"');
    expect(v.message).toContain('grayscale.gray[slot 0]');
    backend.dispose();
  });

  it('stays silent on a fenced pipeline that reuses pool slots behind release events', async () => {
    const { backend, stream, memory, range, read, checker } = setup();
    const producer = stream('producer');
    const consumers = [stream('consumer A'), stream('consumer B')];
    const slots = 3;
    const backing = memory(slots * 256);
    const ready = Array.from({ length: slots }, () => unwrap(backend.createEvent(cuda0)));
    const release = Array.from({ length: slots }, () => consumers.map(() => unwrap(backend.createEvent(cuda0))));
    const out = memory(256, MemoryKind.PinnedHost, 'result');
    for (let frame = 0; frame < 30; frame++) {
      const slot = frame % slots;
      const tensor = range(backing, `frame[slot ${slot}]`, slot * 256, 256);
      for (const e of release[slot]!) unwrap(backend.streamWaitEvent(producer, e)); // release streams
      unwrap(backend.memsetAsync(producer, tensor, frame & 0xff));
      unwrap(backend.recordEvent(ready[slot]!, producer)); // readiness
      consumers.forEach((c, i) => {
        unwrap(backend.streamWaitEvent(c, ready[slot]!));
        read(c, tensor);
        unwrap(backend.recordEvent(release[slot]![i]!, c));
      });
    }
    const last = consumers[0]!;
    const slot2 = range(backing, 'frame[slot 2]', 512, 256);
    unwrap(backend.memcpyAsync(last, range(out, 'result'), slot2));
    const done = unwrap(backend.createEvent(cuda0));
    unwrap(backend.recordEvent(done, last));
    await backend.synchronizeEvent(done);
    backend.noteHostAccess(range(out, 'result'), 'read');
    backend.noteHostAccess(range(out, 'result'), 'write');
    expect(checker.violations).toEqual([]);
    backend.dispose();
  });

  it('reports write-after-read when a slot is reused without waiting on its release event', () => {
    const { backend, stream, memory, range, read, checker } = setup();
    const producer = stream('producer');
    const consumer = stream('consumer');
    const ready = unwrap(backend.createEvent(cuda0));
    const release = unwrap(backend.createEvent(cuda0));
    const slot = range(memory(64), 'frame[slot 0]');
    unwrap(backend.memsetAsync(producer, slot, 1));
    unwrap(backend.recordEvent(ready, producer));
    unwrap(backend.streamWaitEvent(consumer, ready));
    read(consumer, slot);
    unwrap(backend.recordEvent(release, consumer));
    unwrap(backend.memsetAsync(producer, slot, 2)); // reuse, missing streamWaitEvent(producer, release)
    expect(checker.violations.map((v) => v.hazard)).toEqual(['write-after-read']);
    const v = checker.violations[0]!;
    expect(v.earlier.stream).toBe('consumer');
    expect(v.later.stream).toBe('producer');
    expect(v.later.rangeLabel).toBe('frame[slot 0]');
    expect(v.message).toMatch(/release event on "consumer"/);
    backend.dispose();
  });

  it('accepts reuse after the host observed the release event complete', async () => {
    const { backend, stream, memory, range, read, checker } = setup();
    const producer = stream('producer');
    const consumer = stream('consumer');
    const ready = unwrap(backend.createEvent(cuda0));
    const release = unwrap(backend.createEvent(cuda0));
    const slot = range(memory(64), 'frame[slot 0]');
    unwrap(backend.memsetAsync(producer, slot, 1));
    unwrap(backend.recordEvent(ready, producer));
    unwrap(backend.streamWaitEvent(consumer, ready));
    read(consumer, slot);
    unwrap(backend.recordEvent(release, consumer));
    while (backend.queryEvents([release], new Uint8Array(1)) === 0) await flush(); // retirement polling
    unwrap(backend.memsetAsync(producer, slot, 2));
    expect(checker.violations).toEqual([]);
    backend.dispose();
  });

  it('checks at enqueue, so a race is reported even when the streams happened to run in order', async () => {
    const { backend, stream, memory, range, read, checker } = setup();
    const producer = stream('producer');
    const consumer = stream('consumer');
    const t = range(memory(16), 'tensor');
    unwrap(backend.memsetAsync(producer, t, 1));
    await flush();
    await flush(); // the write already ran, but nothing orders the read after it
    read(consumer, t);
    expect(checker.violations.map((v) => v.hazard)).toEqual(['read-after-write']);
    backend.dispose();
  });

  it('reports write-after-write between unordered streams', () => {
    const { backend, stream, memory, range, checker } = setup();
    const a = stream('a');
    const b = stream('b');
    const m = memory(32);
    unwrap(backend.memsetAsync(a, range(m, 'x'), 1));
    unwrap(backend.copyFromHostAsync(b, range(m, 'y', 16, 16), new Uint8Array(16)));
    expect(checker.violations).toHaveLength(1);
    const v = checker.violations[0]!;
    expect(v.hazard).toBe('write-after-write');
    expect([v.earlier.rangeLabel, v.later.rangeLabel]).toEqual(['x', 'y']);
    expect([v.byteOffset, v.byteLength]).toEqual([16, 16]);
    backend.dispose();
  });

  it('works at byte-range granularity: overlapping ranges race, disjoint ranges do not', () => {
    const { backend, stream, memory, range, read, checker } = setup();
    const a = stream('a');
    const b = stream('b');
    const m = memory(200);
    unwrap(backend.memsetAsync(a, range(m, 'left', 0, 100), 1));
    read(b, range(m, 'right', 100, 100));
    expect(checker.violations).toEqual([]);
    read(b, range(m, 'middle', 50, 100));
    expect(checker.violations).toHaveLength(1);
    expect([checker.violations[0]!.byteOffset, checker.violations[0]!.byteLength]).toEqual([50, 50]);
    backend.dispose();
  });

  it('follows transitive event chains across three streams', () => {
    const { backend, stream, memory, range, read, checker } = setup();
    const [a, b, c] = [stream('a'), stream('b'), stream('c')];
    const ea = unwrap(backend.createEvent(cuda0));
    const eb = unwrap(backend.createEvent(cuda0));
    const t = range(memory(8), 't');
    unwrap(backend.memsetAsync(a, t, 1));
    unwrap(backend.recordEvent(ea, a));
    unwrap(backend.streamWaitEvent(b, ea));
    unwrap(backend.recordEvent(eb, b));
    unwrap(backend.streamWaitEvent(c, eb));
    read(c, t);
    expect(checker.violations).toEqual([]);
    backend.dispose();
  });

  it('uses the capture taken at wait time: work after the record is not covered', () => {
    const { backend, stream, memory, range, read, checker } = setup();
    const a = stream('a');
    const b = stream('b');
    const e = unwrap(backend.createEvent(cuda0));
    const t = range(memory(8), 't');
    unwrap(backend.recordEvent(e, a));
    unwrap(backend.memsetAsync(a, t, 1)); // after the record
    unwrap(backend.streamWaitEvent(b, e));
    read(b, t);
    expect(checker.violations.map((v) => v.hazard)).toEqual(['read-after-write']);
    backend.dispose();
  });

  it('checks host accesses: a host read needs a host synchronization first', async () => {
    const { backend, stream, memory, range, checker } = setup();
    const s = stream('producer');
    const pinned = memory(16, MemoryKind.PinnedHost, 'staging');
    const t = range(pinned, 'camera.frame');
    unwrap(backend.memsetAsync(s, t, 9));
    backend.noteHostAccess(t, 'read');
    expect(checker.violations).toHaveLength(1);
    expect(checker.violations[0]!.later.stream).toBe('host');
    expect(checker.violations[0]!.message).toMatch(/the host reads it.*synchronize the host/);
    checker.clear();
    expect(checker.violations).toEqual([]);
    await backend.synchronizeStream(s);
    backend.noteHostAccess(t, 'read');
    expect(checker.violations).toEqual([]);
    backend.dispose();
  });

  it('orders device work after host writes that were declared before it was enqueued', () => {
    const { backend, stream, memory, range, read, checker } = setup();
    const s = stream('upload');
    const t = range(memory(16, MemoryKind.PinnedHost, 'staging'), 'input');
    backend.noteHostAccess(t, 'write');
    read(s, t);
    expect(checker.violations).toEqual([]);
    // ...but a host write while that read may still be pending is a write-after-read.
    backend.noteHostAccess(t, 'write');
    expect(checker.violations.map((v) => [v.hazard, v.earlier.stream, v.later.stream])).toEqual([['write-after-read', 'upload', 'host']]);
    backend.dispose();
  });

  it('ignores host accesses declared from inside host functions, and refuses device-only memory', async () => {
    const { backend, stream, memory, range, checker } = setup();
    const s = stream('s');
    const pinned = range(memory(8, MemoryKind.PinnedHost, 'staging'), 'staging');
    unwrap(backend.memsetAsync(s, pinned, 1));
    unwrap(backend.launchHostFunc(s, () => backend.noteHostAccess(pinned, 'read')));
    await backend.synchronizeStream(s);
    expect(checker.violations).toEqual([]);
    expect(() => backend.noteHostAccess(range(memory(8), 'device only'), 'read')).toThrow(/NotSupported/);
    backend.dispose();
  });

  it('still checks against the accesses of a destroyed stream', () => {
    const { backend, stream, memory, range, read, checker } = setup();
    const a = stream('short-lived');
    const b = stream('b');
    const t = range(memory(8), 't');
    unwrap(backend.memsetAsync(a, t, 1));
    unwrap(backend.destroyStream(a));
    read(b, t);
    expect(checker.violations.map((v) => v.earlier.stream)).toEqual(['short-lived']);
    backend.dispose();
  });

  it('calls onViolation and caps the kept violations', () => {
    const onViolation = vi.fn();
    const { backend, stream, memory, range, read, checker } = setup({ orderingChecker: { onViolation, maxViolations: 2 } });
    const a = stream('a');
    const b = stream('b');
    const t = range(memory(8), 't');
    for (let i = 0; i < 4; i++) {
      unwrap(backend.memsetAsync(a, t, i));
      read(b, t);
    }
    expect(onViolation).toHaveBeenCalled();
    expect(checker.violations).toHaveLength(2);
    expect(checker.droppedViolations).toBe(onViolation.mock.calls.length - 2);
    backend.dispose();
  });

  it('keeps its history bounded over a long fenced run', async () => {
    const { backend, stream, memory, range, read, checker } = setup();
    const producer = stream('producer');
    const consumer = stream('consumer');
    const backing = memory(4 * 4096);
    const ready = Array.from({ length: 4 }, () => unwrap(backend.createEvent(cuda0)));
    const release = Array.from({ length: 4 }, () => unwrap(backend.createEvent(cuda0)));
    const weights = memory(2048, MemoryKind.CudaDevice, 'weights');
    unwrap(backend.memsetAsync(producer, range(weights, 'weights'), 3));
    await backend.synchronizeStream(producer);
    const flags = new Uint8Array(4);
    const sizes: number[] = [];
    for (let frame = 0; frame < 4000; frame++) {
      const slot = frame % 4;
      // Tensors of varying offset and length in the slot create new range boundaries every frame.
      const tensor = range(backing, `t${frame}`, slot * 4096 + ((frame * 13) % 2048), 1 + ((frame * 37) % 2048));
      unwrap(backend.streamWaitEvent(producer, release[slot]!));
      unwrap(backend.memsetAsync(producer, tensor, 1));
      unwrap(backend.recordEvent(ready[slot]!, producer));
      unwrap(backend.streamWaitEvent(consumer, ready[slot]!));
      read(consumer, tensor);
      // Read-only windows of varying bounds: only pruning merges these segments again.
      read(consumer, range(weights, 'weights', (frame * 29) % 1000, 1 + ((frame * 53) % 1000)));
      unwrap(backend.recordEvent(release[slot]!, consumer));
      if (frame % 100 === 99) {
        await flush();
        backend.queryEvents(release, flags);
        sizes.push((checker as StreamOrderingChecker).historySize());
      }
    }
    expect(checker.violations).toEqual([]);
    expect(Math.max(...sizes.slice(20))).toBeLessThanOrEqual(Math.max(...sizes.slice(0, 20)) + 32);
    expect(Math.max(...sizes)).toBeLessThan(400);
    backend.dispose();
  });
});
