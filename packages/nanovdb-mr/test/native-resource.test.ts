import { describe, expect, it } from 'vitest';
import { Device, ErrorCode, HostBackend, unwrap, type Backend } from '@hs/streams';
import {
  AsyncFromSync,
  ResourceBuffer,
  GridType,
  HostResource,
  NativeResource,
  TempPool,
  isAsyncResource,
  pointsToGrid,
  validateGrids,
  type MemoryBlock,
} from '../src/index.js';
import { describeResourceConformance } from '../src/test/index.js';
import { loadTestAddon, type CountingResourceAddon } from './support/test-addon.js';

const { addon, reason } = loadTestAddon();
if (addon === null) console.log(`NativeResource tests skipped: the native test addon is unavailable (${reason})`);

/** A fixture whose dispose checks the accounting from the C side, then destroys the table. */
function countingFixture(test: CountingResourceAddon, backend: Backend, wrap: (r: NativeResource) => NativeResource | AsyncFromSync<NativeResource>) {
  const table = test.createCountingResource('host', false);
  const native = unwrap(NativeResource.open(backend, table));
  return {
    backend,
    device: backend.devices[0] as Device,
    resource: wrap(native),
    dispose: () => {
      const c = test.countingResourceStats(table);
      expect(c.allocations, 'C side: every allocation was deallocated').toBe(c.deallocations);
      expect([c.liveBlocks, c.bytesOutstanding, c.badReturns]).toEqual([0, 0, 0]);
      unwrap(native.dispose());
      expect(test.countingResourceStats(table).destroyCalls).toBe(1);
    },
  };
}

if (addon !== null) {
  describeResourceConformance('NativeResource (counting host table) on HostBackend', () => countingFixture(addon, new HostBackend(), (r) => r));
  describeResourceConformance('AsyncFromSync(NativeResource) on HostBackend (seeded interleaving)', () =>
    countingFixture(addon, new HostBackend({ seed: 3 }), (r) => new AsyncFromSync(r.backend, r)),
  );
}

describe.skipIf(addon === null)('NativeResource: tables from another native addon', () => {
  const test = addon as CountingResourceAddon;

  it('is the synchronous tier over a table without the stream-ordered pair, with the table kind and name', () => {
    const backend = new HostBackend();
    const table = test.createCountingResource('host', false);
    const r = unwrap(NativeResource.open(backend, table));
    expect(isAsyncResource(r)).toBe(false);
    expect([r.kind, r.device, r.hostAccessible, r.deviceAccessible]).toEqual(['host', Device.cpu(), true, false]);
    expect(r.label).toBe('NativeResource "counting host"');
    unwrap(r.dispose());
    backend.dispose();
  });

  it('hands out real, writable host memory: a ResourceBuffer through it is the C allocation', async () => {
    const backend = new HostBackend();
    const table = test.createCountingResource('host', false);
    const r = unwrap(NativeResource.open(backend, table));
    const buffer = unwrap(ResourceBuffer.allocate(backend, r, 1000, { element: Float32Array, alignment: 4096 }));
    expect(test.countingResourceStats(table)).toMatchObject({ allocations: 1, bytesOutstanding: 4000 });
    expect((buffer.data as MemoryBlock).memory.address % 4096n).toBe(0n);
    const view = unwrap(buffer.hostView());
    view.fill(2.5);
    const copy = new Uint8Array(4000);
    const stream = unwrap(backend.createStream(Device.cuda(0)));
    unwrap(backend.copyToHostAsync(stream, copy, buffer.data as MemoryBlock));
    await backend.synchronizeStream(stream);
    expect(new Float32Array(copy.buffer)[999]).toBe(2.5);
    buffer.dispose();
    expect(test.countingResourceStats(table)).toMatchObject({ deallocations: 1, bytesOutstanding: 0 });
    // The host view was detached before the C side freed the memory: no JS access can reach it.
    expect(view.length).toBe(0);
    unwrap(r.dispose());
    backend.dispose();
  });

  it('builds a NanoVDB grid with all scratch and output through the table (C side balanced)', () => {
    const backend = new HostBackend();
    const table = test.createCountingResource('host', false);
    const r = unwrap(NativeResource.open(backend, table));
    const coords = new Int32Array([0, 0, 0, 1, 2, 3, 100, -40, 7, 9, 9, 9]);
    const handle = unwrap(pointsToGrid(backend, r, { space: 'index', coords }, { gridType: GridType.OnIndex, name: 'native' }));
    const bytes = unwrap(handle.hostBytes());
    expect(unwrap(validateGrids(bytes))[0]?.voxelCount).toBe(4);
    const during = test.countingResourceStats(table);
    expect(during.allocations).toBeGreaterThan(1);
    expect(during.liveBlocks).toBe(1); // only the grid buffer is still out
    handle.dispose();
    const after = test.countingResourceStats(table);
    expect([after.allocations - after.deallocations, after.liveBlocks, after.badReturns]).toEqual([0, 0, 0]);
    unwrap(r.dispose());
    backend.dispose();
  });

  it('serves a TempPool and stream-ordered ResourceBuffers once lifted with AsyncFromSync', async () => {
    const backend = new HostBackend();
    const table = test.createCountingResource('host', false);
    const r = unwrap(NativeResource.open(backend, table));
    const lifted = new AsyncFromSync(backend, r);
    const stream = unwrap(backend.createStream(Device.cuda(0)));
    const buffer = unwrap(ResourceBuffer.allocateAsync(backend, stream, lifted, 64, { noInit: true }));
    const temp = new TempPool(backend, lifted, stream);
    unwrap(temp.reserve(1 << 16));
    unwrap(temp.reserve(1 << 17)); // growth discards the smaller block
    temp.dispose();
    buffer.dispose();
    await backend.synchronizeStream(stream);
    const c = test.countingResourceStats(table);
    expect([c.allocations, c.deallocations, c.liveBlocks]).toEqual([3, 3, 0]);
    unwrap(r.dispose());
    backend.dispose();
  });

  it('refuses invalid tables with InvalidArgument, calling nothing and destroying nothing', () => {
    const backend = new HostBackend();
    const cases: [string, RegExp][] = [
      ['structSize', /struct_size/],
      ['version', /version/],
      ['deviceType', /device_type/],
      ['nullAllocate', /allocate is NULL/],
      ['nullDeallocate', /deallocate is NULL/],
      ['halfAsync', /allocate_async and deallocate_async/],
      ['untagged', /HS_MEMORY_RESOURCE_TYPE_TAG/],
    ];
    for (const [problem, message] of cases) {
      const table = test.createBadResourceTable(problem);
      const r = NativeResource.open(backend, table);
      expect(r.ok ? null : r.error.code, problem).toBe(ErrorCode.InvalidArgument);
      if (!r.ok) expect(r.error.message).toMatch(message);
      expect(test.countingResourceStats(table)).toMatchObject({ allocations: 0, destroyCalls: 0 });
    }
    for (const notATable of [null, 42, {}, 'table', new Uint8Array(8)]) {
      const r = NativeResource.open(backend, notATable);
      expect(r.ok ? null : r.error.code).toBe(ErrorCode.InvalidArgument);
    }
    expect(() => NativeResource.open(null as unknown as Backend, test.createCountingResource('host', false))).toThrow(/expected a Backend/);
    backend.dispose();
  });

  it('turns allocate failures into typed errors and leaks nothing on the C side', () => {
    const backend = new HostBackend();
    const cases: [string, ErrorCode, RegExp][] = [
      ['misaligned', ErrorCode.ProtocolError, /misaligned pointer \(given back\)/],
      ['nullPointer', ErrorCode.ProtocolError, /NULL pointer/],
      ['unknownStatus', ErrorCode.ProtocolError, /outside hs_resource_status/],
      ['outOfMemory', ErrorCode.OutOfMemory, /out of memory.*nothing was allocated/],
      ['failure', ErrorCode.DeviceError, /failure/],
    ];
    for (const [problem, code, message] of cases) {
      const table = test.createBadResourceTable(problem);
      const r = unwrap(NativeResource.open(backend, table));
      const a = r.allocate(4096, 256);
      expect(a.ok ? null : a.error.code, problem).toBe(code);
      if (!a.ok) expect(a.error.message).toMatch(message);
      const c = test.countingResourceStats(table);
      expect([c.allocations - c.deallocations, c.liveBlocks, r.liveBlocks], problem).toEqual([0, 0, 0]);
      unwrap(r.dispose());
    }
    backend.dispose();
  });

  it('reports a table that refuses its own misaligned pointer back (the table leaks, hs says so)', () => {
    const backend = new HostBackend();
    const table = test.createBadResourceTable('misalignedAndRefused');
    const r = unwrap(NativeResource.open(backend, table));
    const a = r.allocate(64, 256);
    expect(!a.ok && a.error.code).toBe(ErrorCode.ProtocolError);
    if (!a.ok) expect(a.error.message).toMatch(/refused it back/);
    expect(r.liveBlocks).toBe(0);
    expect(test.countingResourceStats(table).liveBlocks).toBe(1);
    unwrap(r.dispose());
    backend.dispose();
  });

  it('reports a failing deallocate as DeviceError with the block forgotten by hs', () => {
    const backend = new HostBackend();
    const table = test.createBadResourceTable('failingDeallocate');
    const r = unwrap(NativeResource.open(backend, table));
    const block = unwrap(r.allocate(128, 64));
    const d = r.deallocate(block, 128, 64);
    expect(!d.ok && d.error.code).toBe(ErrorCode.DeviceError);
    expect(r.liveBlocks).toBe(0);
    const again = r.deallocate(block, 128, 64);
    expect(!again.ok && again.error.code).toBe(ErrorCode.InvalidState);
    unwrap(r.dispose());
    backend.dispose();
  });

  it('checks returned blocks: foreign, already returned, wrong size or alignment; the C side never sees them', () => {
    const backend = new HostBackend();
    const table = test.createCountingResource('host', false);
    const r = unwrap(NativeResource.open(backend, table));
    const foreign = unwrap(new HostResource(backend).allocate(256, 256));
    const f = r.deallocate(foreign, 256, 256);
    expect(!f.ok && f.error.code).toBe(ErrorCode.InvalidArgument);
    const block = unwrap(r.allocate(256, 256));
    for (const [bytes, alignment] of [[255, 256], [256, 128]] as const) {
      const wrong = r.deallocate(block, bytes, alignment);
      expect(!wrong.ok && wrong.error.code).toBe(ErrorCode.InvalidArgument);
    }
    unwrap(r.deallocate(block, 256, 256));
    const twice = r.deallocate(block, 256, 256);
    expect(!twice.ok && twice.error.code).toBe(ErrorCode.InvalidState);
    expect(test.countingResourceStats(table)).toMatchObject({ allocations: 1, deallocations: 1, badReturns: 0 });
    unwrap(r.dispose());
    backend.dispose();
  });

  it('opens a table once at a time, refuses dispose while blocks are live, destroys it exactly once', () => {
    const backend = new HostBackend();
    const table = test.createCountingResource('host', false);
    const r = unwrap(NativeResource.open(backend, table));
    const twice = NativeResource.open(backend, table);
    expect(!twice.ok && twice.error.message).toMatch(/already open/);
    const block = unwrap(r.allocate(32, 32));
    const early = r.dispose();
    expect(!early.ok && early.error.code).toBe(ErrorCode.InvalidState);
    expect(test.countingResourceStats(table).destroyCalls).toBe(0);
    unwrap(r.deallocate(block, 32, 32));
    unwrap(r.dispose());
    unwrap(r.dispose());
    expect(test.countingResourceStats(table).destroyCalls).toBe(1);
    const after = r.allocate(32, 32);
    expect(!after.ok && after.error.code).toBe(ErrorCode.InvalidState);
    // Closed: the same table may be opened again (ownership went back with destroy).
    const reopened = unwrap(NativeResource.open(backend, table));
    unwrap(reopened.dispose());
    expect(test.countingResourceStats(table).destroyCalls).toBe(2);
    backend.dispose();
  });

  it('gives the memory back to the table even after the backend was disposed under a live block', () => {
    const backend = new HostBackend();
    const table = test.createCountingResource('host', false);
    const r = unwrap(NativeResource.open(backend, table));
    const block = unwrap(r.allocate(512, 64));
    backend.dispose();
    const d = r.deallocate(block, 512, 64);
    expect(d.ok ? null : d.error.code).toBe(ErrorCode.InvalidState);
    expect(test.countingResourceStats(table)).toMatchObject({ deallocations: 1, liveBlocks: 0 });
    unwrap(r.dispose());
  });

  it('refuses a device table on the host backend with NotSupported and destroys it (hs owned it once opened)', () => {
    const backend = new HostBackend();
    const table = test.createCountingResource('device', true);
    const r = NativeResource.open(backend, table);
    expect(!r.ok && r.error.code).toBe(ErrorCode.NotSupported);
    if (!r.ok) expect(r.error.message).toMatch(/CudaBackend/);
    expect(test.countingResourceStats(table)).toMatchObject({ allocations: 0, destroyCalls: 1 });
    backend.dispose();
  });
});
