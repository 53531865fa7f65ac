import { describe, expect, it } from 'vitest';
import { Device, ErrorCode, HostBackend, MemoryKind, unwrap, type DeviceMemory, type MemoryRange } from '../src/index.js';

const cuda0 = Device.cuda(0);
const range = (memory: DeviceMemory, byteOffset = 0, byteLength = 8, label = 'counter'): MemoryRange => ({ memory, byteOffset, byteLength, label });
const u64 = (bytes: Uint8Array, offset = 0): bigint => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getBigUint64(offset, true);

describe('HostBackend stream memory operations (emulated writeValue64/waitValue64)', () => {
  it('writes a little-endian u64 in stream order, after the work enqueued before it', () => {
    const backend = new HostBackend({ scheduling: 'manual' });
    const ops = backend.streamMemoryOps;
    const s = unwrap(backend.createStream(cuda0));
    const mem = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: cuda0, byteSize: 64 }));
    const pinned = unwrap(backend.allocate({ kind: MemoryKind.PinnedHost, device: Device.cpu(), byteSize: 64 }));
    const view = unwrap(backend.hostView(pinned));
    unwrap(backend.memsetAsync(s, range(mem, 0, 64), 0x11));
    unwrap(ops.writeValue64(s, range(mem, 8), 2n ** 40n + 3n));
    unwrap(ops.writeValue64(s, range(pinned, 16), 0xfedc_ba98_7654_3210n));
    // Nothing runs inside the enqueueing call.
    expect(u64(view, 16)).toBe(0n);
    expect(backend.step(s)).toBe(true); // memset
    expect(backend.step(s)).toBe(true); // write into cudaDevice memory
    expect(u64(view, 16)).toBe(0n);
    expect(backend.step(s)).toBe(true); // write into pinnedHost memory
    expect(u64(view, 16)).toBe(0xfedc_ba98_7654_3210n);
    const out = new Uint8Array(64);
    unwrap(backend.copyToHostAsync(s, out, range(mem, 0, 64)));
    backend.runUntilIdle();
    expect(u64(out, 8)).toBe(2n ** 40n + 3n);
    expect(out[0]).toBe(0x11);
    expect(out[16]).toBe(0x11);
    backend.dispose();
  });

  it('holds a stream at a value wait until another stream writes the value (cross-stream), in manual mode only by stepping', () => {
    const backend = new HostBackend({ scheduling: 'manual' });
    const ops = backend.streamMemoryOps;
    const producer = unwrap(backend.createStream(cuda0, { label: 'producer' }));
    const consumer = unwrap(backend.createStream(cuda0, { label: 'consumer' }));
    const counter = unwrap(backend.allocate({ kind: MemoryKind.PinnedHost, device: Device.cpu(), byteSize: 8 }));
    const data = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: cuda0, byteSize: 4 }));
    const seen = new Uint8Array(4);
    unwrap(ops.waitValue64(consumer, range(counter), 5n));
    unwrap(backend.copyToHostAsync(consumer, seen, range(data, 0, 4)));
    expect(backend.step(consumer)).toBe(false); // blocked at the value wait
    unwrap(backend.memsetAsync(producer, range(data, 0, 4), 7));
    unwrap(ops.writeValue64(producer, range(counter), 4n)); // not enough
    expect(backend.runUntilIdle()).toBe(2);
    expect(backend.step(consumer)).toBe(false);
    unwrap(ops.writeValue64(producer, range(counter), 5n));
    backend.runUntilIdle();
    expect(Array.from(seen)).toEqual([7, 7, 7, 7]);
    backend.dispose();
  });

  it('is satisfied by a larger value, compares all 64 bits, and waits on 0 at once', () => {
    const backend = new HostBackend({ scheduling: 'manual' });
    const ops = backend.streamMemoryOps;
    const s = unwrap(backend.createStream(cuda0));
    const counter = unwrap(backend.allocate({ kind: MemoryKind.PinnedHost, device: Device.cpu(), byteSize: 8 }));
    const view = unwrap(backend.hostView(counter));
    unwrap(ops.waitValue64(s, range(counter), 0n));
    expect(backend.step(s)).toBe(true);
    unwrap(ops.waitValue64(s, range(counter), 2n ** 32n));
    new DataView(view.buffer).setBigUint64(0, 2n ** 32n - 1n, true);
    expect(backend.step(s)).toBe(false); // low word all ones, high word 0: still below
    new DataView(view.buffer).setBigUint64(0, 2n ** 33n, true);
    expect(backend.step(s)).toBe(true);
    backend.dispose();
  });

  it('in auto mode re-checks a blocked value wait on a timer: a host (or other process) write releases it', async () => {
    const backend = new HostBackend();
    const ops = backend.streamMemoryOps;
    const s = unwrap(backend.createStream(cuda0));
    const counter = unwrap(backend.allocate({ kind: MemoryKind.PinnedHost, device: Device.cpu(), byteSize: 16 }));
    const view = unwrap(backend.hostView(counter));
    unwrap(ops.waitValue64(s, range(counter, 8), 9n));
    let done = false;
    const sync = backend.synchronizeStream(s).then(() => {
      done = true;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(done).toBe(false);
    // As another process writing the shared mapping would: no op of this backend announces it.
    new DataView(view.buffer).setBigUint64(8, 9n, true);
    await sync;
    expect(done).toBe(true);
    backend.dispose();
  });

  it('disposing the backend rejects a host wait behind a blocked value wait and stops the poll', async () => {
    const backend = new HostBackend();
    const s = unwrap(backend.createStream(cuda0));
    const counter = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: cuda0, byteSize: 8 }));
    unwrap(backend.streamMemoryOps.waitValue64(s, range(counter), 1n));
    const sync = backend.synchronizeStream(s);
    await new Promise((r) => setTimeout(r, 5));
    backend.dispose();
    await expect(sync).rejects.toMatchObject({ code: ErrorCode.InvalidState });
  });

  it('refuses ranges and values a 64-bit memory operation cannot take, naming the problem', () => {
    const backend = new HostBackend();
    const ops = backend.streamMemoryOps;
    const s = unwrap(backend.createStream(cuda0));
    const mem = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: cuda0, byteSize: 256 }));
    const pageable = unwrap(backend.allocate({ kind: MemoryKind.Host, device: Device.cpu(), byteSize: 256 }));
    const cases: [MemoryRange, bigint, RegExp][] = [
      [range(mem, 0, 4), 1n, /must be 8 bytes/],
      [range(mem, 4), 1n, /8-byte aligned/],
      [range(pageable), 1n, /need cudaDevice or pinnedHost memory/],
      [range(mem), -1n, /0\.\.2\^64-1/],
      [range(mem), 2n ** 64n, /0\.\.2\^64-1/],
      [range(mem, 256), 1n, /does not lie inside/],
    ];
    for (const [r, value, message] of cases) {
      for (const result of [ops.writeValue64(s, r, value), ops.waitValue64(s, r, value)]) {
        expect(!result.ok && result.error.code).toBe(ErrorCode.InvalidArgument);
        expect(!result.ok && result.error.message).toMatch(message);
      }
    }
    const other = new HostBackend();
    const foreign = ops.writeValue64(unwrap(other.createStream(cuda0)), range(mem), 1n);
    expect(!foreign.ok && foreign.error.code).toBe(ErrorCode.InvalidArgument);
    other.dispose();
    unwrap(backend.free(mem));
    const freed = ops.writeValue64(s, range(mem), 1n);
    expect(!freed.ok && freed.error.code).toBe(ErrorCode.InvalidState);
    backend.dispose();
  });
});
