import { Device, ErrorCode, HostBackend, HsError, MemoryKind, unwrap, type Backend, type DeviceMemory, type Event, type Result } from '@hs/streams';
import { afterEach, describe, expect, it } from 'vitest';
import { DType, Tensor, type TensorInit } from '../src/index.js';

/** A minimal backing-side subclass, the way a pool slot drives a reusable tensor. */
class BoundTensor extends Tensor {
  constructor(init: TensorInit) {
    super(init);
  }
  bind(dtype: DType, shape: readonly number[], byteOffset: number, byteLimit: number): Result<void> {
    return this.bindContiguous(dtype, shape, byteOffset, byteLimit);
  }
  commit(event: Event | null): void {
    this.commitReadiness(event);
  }
  retire(): void {
    this.invalidate();
  }
}

const code = <T>(r: Result<T>): ErrorCode | undefined => (r.ok ? undefined : r.error.code);

function allocate(backend: Backend, kind: MemoryKind, byteSize: number): DeviceMemory {
  const device = kind === MemoryKind.CudaDevice || kind === MemoryKind.CudaManaged ? Device.cuda(0) : Device.cpu();
  return unwrap(backend.allocate({ kind, device, byteSize, label: `${kind} block` }));
}

describe('Tensor host access', () => {
  const backends: HostBackend[] = [];
  const make = (options?: ConstructorParameters<typeof HostBackend>[0]): HostBackend => {
    const b = new HostBackend(options);
    backends.push(b);
    return b;
  };
  afterEach(() => {
    for (const b of backends.splice(0)) b.dispose();
  });

  for (const kind of [MemoryKind.Host, MemoryKind.PinnedHost, MemoryKind.CudaManaged]) {
    it(`reads ${kind} memory through hostView after synchronizeForHost`, async () => {
      const backend = make({ orderingChecker: true });
      const memory = allocate(backend, kind, 256);
      const whole = unwrap(backend.hostView(memory));
      whole.fill(0);
      backend.noteHostAccess({ memory, byteOffset: 0, byteLength: 256, label: 'init' }, 'write');
      const t = unwrap(Tensor.import({ backend, memory, shape: [4, 4], dtype: DType.uint16, byteOffset: 32 }));
      if (kind !== MemoryKind.Host) {
        const producer = unwrap(backend.createStream(Device.cuda(0), { label: 'producer' }));
        backend.memsetAsync(producer, t.data(), 7);
        unwrap(t.setReadinessStream(producer));
      } else {
        whole.fill(7, 32, 64);
        backend.noteHostAccess(t.data(), 'write');
        unwrap(t.setReadinessStream(unwrap(backend.createStream(Device.cuda(0)))));
      }
      await t.synchronizeForHost();
      const view = unwrap(t.hostView());
      expect(view.byteLength).toBe(32);
      expect([...view]).toEqual(new Array(32).fill(7));
      expect(whole[31]).toBe(0);
      expect(whole[64]).toBe(0);
      expect(unwrap(t.hostView())).toBe(view);
      expect(backend.orderingChecker?.violations ?? []).toEqual([]);
    });
  }

  it('declares hostView reads to the backend: an unsynchronized read is reported', () => {
    const backend = make({ orderingChecker: true, scheduling: 'manual' });
    const memory = allocate(backend, MemoryKind.PinnedHost, 64);
    const t = unwrap(Tensor.import({ backend, memory, shape: [64], dtype: DType.uint8 }));
    const producer = unwrap(backend.createStream(Device.cuda(0), { label: 'producer' }));
    backend.memsetAsync(producer, t.data(), 1);
    unwrap(t.setReadinessStream(producer));
    backend.runUntilIdle();
    unwrap(t.hostView());
    expect(backend.orderingChecker?.violations.length).toBeGreaterThan(0);
  });

  it('returns NotSupported for a host view of cudaDevice memory; copyToHost still works', async () => {
    const backend = make();
    const memory = allocate(backend, MemoryKind.CudaDevice, 64);
    const t = unwrap(Tensor.import({ backend, memory, shape: [8], dtype: DType.float64 }));
    const stream = unwrap(backend.createStream(Device.cuda(0)));
    backend.memsetAsync(stream, t.data(), 3);
    unwrap(t.setReadinessStream(stream));
    expect(code(t.hostView())).toBe(ErrorCode.NotSupported);
    const dst = new Uint8Array(64);
    await t.copyToHost(dst, unwrap(backend.createStream(Device.cuda(0))));
    expect(dst.every((b) => b === 3)).toBe(true);
  });

  it('copyToHostAsync returns before the copy ran and orders it after readiness', async () => {
    const backend = make({ scheduling: 'manual', seed: 3 });
    const memory = allocate(backend, MemoryKind.CudaDevice, 32);
    const t = unwrap(Tensor.import({ backend, memory, shape: [32], dtype: DType.uint8 }));
    const producer = unwrap(backend.createStream(Device.cuda(0), { label: 'producer' }));
    const reader = unwrap(backend.createStream(Device.cuda(0), { label: 'reader' }));
    backend.memsetAsync(producer, t.data(), 9);
    unwrap(t.setReadinessStream(producer));
    const dst = new Uint8Array(32);
    unwrap(t.copyToHostAsync(dst, reader));
    expect(dst.every((b) => b === 0)).toBe(true);
    // Run the reader first: its copy must still wait for the producer's memset.
    while (backend.step(reader)) {
      /* drain what is runnable on the reader alone */
    }
    expect(dst.every((b) => b === 0)).toBe(true);
    backend.runUntilIdle();
    expect(dst.every((b) => b === 9)).toBe(true);
    expect(code(t.copyToHostAsync(new Uint8Array(31), reader))).toBe(ErrorCode.InvalidArgument);
    expect(() => t.copyToHostAsync([] as unknown as Uint8Array, reader)).toThrow(/Uint8Array/);
  });

  it('backed tensors: bind opens a writable phase, commit makes them read-only with a contract', () => {
    const backend = make();
    const memory = allocate(backend, MemoryKind.PinnedHost, 1024);
    const t = new BoundTensor({ backend, memory, backing: null, name: 'slot 0' });
    expect(() => t.data()).toThrow(/stale/);
    expect(t.hasReadinessStreamContract()).toBe(false);

    unwrap(t.bind(DType.float32, [2, 8], 512, 256));
    const shape = t.shape;
    const range = t.data();
    expect(t.strides).toEqual([8, 1]);
    expect(range).toMatchObject({ byteOffset: 512, byteLength: 64, label: 'slot 0' });
    expect(t.readOnly).toBe(false);
    expect(unwrap(t.mutableData())).toBe(range);
    const view = unwrap(t.mutableHostView());
    view.fill(1);
    expect(code(t.setReadinessStream(unwrap(backend.createStream(Device.cuda(0)))))).toBe(ErrorCode.NotSupported);

    t.commit(null);
    expect(t.readOnly).toBe(true);
    expect(t.hasReadinessStreamContract()).toBe(true);
    expect(t.readinessEvent).toBeNull();
    expect(code(t.mutableData())).toBe(ErrorCode.PermissionDenied);
    expect(code(t.mutableHostView())).toBe(ErrorCode.PermissionDenied);

    // Same layout again reuses the shape array and range; a new one replaces them.
    t.retire();
    expect(code(t.hostView())).toBe(ErrorCode.InvalidState);
    unwrap(t.bind(DType.float32, [2, 8], 512, 256));
    expect(t.shape).toBe(shape);
    expect(t.data()).toBe(range);
    unwrap(t.bind(DType.uint8, [3], 512, 256));
    expect(t.shape).toEqual([3]);
    expect(t.data().byteLength).toBe(3);

    // Over the bound, bad dims: errors, layout unchanged.
    expect(code(t.bind(DType.float32, [65, 1], 512, 256))).toBe(ErrorCode.InvalidArgument);
    expect(code(t.bind(DType.uint8, [-2], 512, 256))).toBe(ErrorCode.InvalidArgument);
    expect(code(t.bind(DType.uint8, [2 ** 40, 2 ** 40], 512, 256))).toBe(ErrorCode.ArithmeticOverflow);
    expect(t.shape).toEqual([3]);
  });

  it('synchronizeForHost resolves at once for a host-complete tensor and waits on the readiness event otherwise', async () => {
    const backend = make({ scheduling: 'manual' });
    const memory = allocate(backend, MemoryKind.PinnedHost, 256);
    const t = new BoundTensor({ backend, memory, backing: null, name: 'host written' });
    unwrap(t.bind(DType.uint8, [16], 0, 256));
    await expect(t.synchronizeForHost()).rejects.toMatchObject({ name: 'HsError', code: ErrorCode.InvalidState });
    t.commit(null);
    await expect(t.synchronizeForHost()).resolves.toBeUndefined();

    const stream = unwrap(backend.createStream(Device.cuda(0)));
    const event = unwrap(backend.createEvent(Device.cuda(0)));
    unwrap(t.bind(DType.uint8, [16], 0, 256));
    backend.memsetAsync(stream, unwrap(t.mutableData()), 4);
    unwrap(backend.recordEvent(event, stream));
    t.commit(event);
    let done = false;
    const pending = t.synchronizeForHost().then(() => {
      done = true;
    });
    await Promise.resolve();
    expect(done).toBe(false);
    backend.runUntilIdle();
    await pending;
    expect(done).toBe(true);
    expect([...unwrap(t.hostView())]).toEqual(new Array(16).fill(4));
  });
});

describe('Tensor host waits reject with HsError', () => {
  const backends: HostBackend[] = [];
  afterEach(() => {
    for (const b of backends.splice(0)) b.dispose();
  });
  /** A cudaDevice import of 16 bytes filled with 5 on its producer stream, and a reader stream. */
  const setup = (options?: ConstructorParameters<typeof HostBackend>[0]) => {
    const backend = new HostBackend(options);
    backends.push(backend);
    const memory = allocate(backend, MemoryKind.CudaDevice, 16);
    const t = unwrap(Tensor.import({ backend, memory, shape: [16], dtype: DType.uint8, name: 'frame' }));
    const producer = unwrap(backend.createStream(Device.cuda(0), { label: 'producer' }));
    const reader = unwrap(backend.createStream(Device.cuda(0), { label: 'reader' }));
    unwrap(backend.memsetAsync(producer, t.data(), 5));
    return { backend, t, producer, reader };
  };
  const planted = (backend: HostBackend, stream: Parameters<Backend['launchHostFunc']>[0]): void => {
    unwrap(
      backend.launchHostFunc(stream, () => {
        throw new Error('planted producer failure');
      }),
    );
  };

  it('copyToHost resolves with nothing once dst holds the bytes', async () => {
    const { t, producer, reader } = setup();
    unwrap(t.setReadinessStream(producer));
    const dst = new Uint8Array(16);
    await expect(t.copyToHost(dst, reader)).resolves.toBeUndefined();
    expect([...dst]).toEqual(new Array(16).fill(5));
  });

  it('copyToHost rejects with InvalidArgument for a short or non-Uint8Array destination', async () => {
    const { t, producer, reader } = setup();
    unwrap(t.setReadinessStream(producer));
    await expect(t.copyToHost(new Uint8Array(15), reader)).rejects.toMatchObject({ name: 'HsError', code: ErrorCode.InvalidArgument, message: expect.stringContaining('pass a larger Uint8Array') });
    await expect(t.copyToHost([] as unknown as Uint8Array, reader)).rejects.toMatchObject({ name: 'HsError', code: ErrorCode.InvalidArgument });
  });

  it('copyToHost rejects with InvalidState without a readiness contract, on a destroyed stream and on a disposed tensor', async () => {
    const { backend, t, producer, reader } = setup();
    await expect(t.copyToHost(new Uint8Array(16), reader)).rejects.toMatchObject({ name: 'HsError', code: ErrorCode.InvalidState, message: expect.stringContaining('setReadinessStream') });
    unwrap(t.setReadinessStream(producer));
    unwrap(backend.destroyStream(reader));
    await expect(t.copyToHost(new Uint8Array(16), reader)).rejects.toMatchObject({ name: 'HsError', code: ErrorCode.InvalidState, message: expect.stringContaining('destroyed') });
    t.dispose();
    const other = unwrap(backend.createStream(Device.cuda(0)));
    await expect(t.copyToHost(new Uint8Array(16), other)).rejects.toMatchObject({ name: 'HsError', code: ErrorCode.InvalidState, message: expect.stringContaining('stale') });
  });

  it('copyToHost and synchronizeForHost reject with DeviceError when the producer faulted', async () => {
    const { backend, t, producer, reader } = setup();
    planted(backend, producer);
    unwrap(t.setReadinessStream(producer));
    const error: unknown = await t.synchronizeForHost().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(HsError);
    expect(error).toMatchObject({ code: ErrorCode.DeviceError, message: expect.stringContaining('planted producer failure') });
    expect((error as HsError).cause).toBeInstanceOf(Error);
    // The reader's stream waits on the faulted producer's event; its own work is fine.
    await expect(t.copyToHost(new Uint8Array(16), reader)).resolves.toBeUndefined();
    planted(backend, reader);
    await expect(t.copyToHost(new Uint8Array(16), reader)).rejects.toMatchObject({ name: 'HsError', code: ErrorCode.DeviceError });
  });

  it('pending host waits reject with InvalidState when the backend is disposed', async () => {
    const { backend, t, producer, reader } = setup({ scheduling: 'manual' });
    unwrap(t.setReadinessStream(producer));
    const synced = t.synchronizeForHost();
    const copied = t.copyToHost(new Uint8Array(16), reader);
    await Promise.resolve();
    backend.dispose();
    await expect(synced).rejects.toMatchObject({ name: 'HsError', code: ErrorCode.InvalidState, message: expect.stringContaining('disposed') });
    await expect(copied).rejects.toMatchObject({ name: 'HsError', code: ErrorCode.InvalidState });
  });

  it('synchronizeForHost reports a missing contract as a rejection, not a synchronous throw', async () => {
    const { t } = setup();
    let promise: Promise<void> | undefined;
    expect(() => (promise = t.synchronizeForHost())).not.toThrow();
    await expect(promise).rejects.toMatchObject({ name: 'HsError', code: ErrorCode.InvalidState });
  });
});
