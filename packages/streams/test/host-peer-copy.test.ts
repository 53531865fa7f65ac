import { describe, expect, it } from 'vitest';
import { Device, ErrorCode, HostBackend, MemoryKind, unwrap, type DeviceMemory, type MemoryRange } from '../src/index.js';

const cuda0 = Device.cuda(0);
const cuda1 = Device.cuda(1);
const range = (memory: DeviceMemory, byteLength = memory.byteSize, label = memory.label): MemoryRange => ({ memory, byteOffset: 0, byteLength, label });

describe('HostBackend peer copies', () => {
  it('stages a copy between devices through pinned host memory when peerAccess is false, in stream order, the ordering checker silent', async () => {
    const backend = new HostBackend({ deviceCount: 2, peerAccess: false, orderingChecker: true });
    const peer = backend.peerCopy;
    expect([peer.canAccessPeer(cuda1, cuda0), peer.canAccessPeer(cuda0, cuda0)]).toEqual([false, true]);
    const writer = unwrap(backend.createStream(cuda0, { label: 'writer' }));
    const reader = unwrap(backend.createStream(cuda1, { label: 'reader' }));
    const written = unwrap(backend.createEvent(cuda0, { label: 'written' }));
    const src = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: cuda0, byteSize: 512, label: 'src' }));
    const dst = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: cuda1, byteSize: 512, label: 'dst' }));
    const staging = unwrap(backend.allocate({ kind: MemoryKind.PinnedHost, device: Device.cpu(), byteSize: 1024, label: 'staging' }));
    unwrap(backend.memsetAsync(writer, range(src), 42));
    unwrap(backend.recordEvent(written, writer));
    unwrap(backend.streamWaitEvent(reader, written));

    const missing = peer.copyAsync(reader, range(dst), range(src));
    expect(missing.ok).toBe(false);
    if (!missing.ok) {
      expect(missing.error.code).toBe(ErrorCode.InvalidArgument);
      expect(missing.error.message).toContain('cuda:1 cannot access cuda:0 directly, so the copy is staged through pinned host memory; pass a pinnedHost staging range of at least 512 bytes');
    }
    const small = peer.copyAsync(reader, range(dst), range(src), range(staging, 256));
    expect(small.ok ? null : small.error.message).toContain('staging range "staging" is 256 bytes of pinnedHost memory; a staged copy needs pinnedHost memory of at least 512 bytes');

    expect(unwrap(peer.copyAsync(reader, range(dst), range(src), range(staging)))).toBe('staged');
    const out = new Uint8Array(512);
    unwrap(backend.copyToHostAsync(reader, out, range(dst)));
    await backend.synchronizeStream(reader);
    expect(out.every((b) => b === 42)).toBe(true);
    expect(unwrap(backend.hostView(staging)).subarray(0, 512).every((b) => b === 42)).toBe(true);
    expect(backend.orderingChecker?.violations).toEqual([]);
    backend.dispose();
  });

  it('takes the peer path by default and needs no staging then', async () => {
    const backend = new HostBackend({ deviceCount: 2 });
    const reader = unwrap(backend.createStream(cuda1));
    const src = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: cuda0, byteSize: 64 }));
    const dst = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: cuda1, byteSize: 64 }));
    expect(unwrap(backend.peerCopy.copyAsync(reader, range(dst), range(src)))).toBe('peer');
    await backend.synchronizeStream(reader);
    backend.dispose();
  });

  it('reports a copy whose writer on the source device was not waited for (ordering checker)', async () => {
    const backend = new HostBackend({ deviceCount: 2, orderingChecker: true, scheduling: 'manual' });
    const writer = unwrap(backend.createStream(cuda0, { label: 'writer' }));
    const reader = unwrap(backend.createStream(cuda1, { label: 'reader' }));
    const src = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: cuda0, byteSize: 64, label: 'src' }));
    const dst = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: cuda1, byteSize: 64, label: 'dst' }));
    unwrap(backend.memsetAsync(writer, range(src), 1));
    unwrap(backend.peerCopy.copyAsync(reader, range(dst), range(src)));
    backend.runUntilIdle();
    expect(backend.orderingChecker?.violations.length).toBeGreaterThan(0);
    backend.dispose();
  });

  it('refuses a peerAccess option that is not a boolean', () => {
    expect(() => new HostBackend({ peerAccess: 1 as never })).toThrow(/peerAccess must be a boolean/);
  });
});
