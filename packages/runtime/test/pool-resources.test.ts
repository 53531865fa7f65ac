import { AsyncFromSync, DeviceResource, MallocResource, PinnedResource, StatisticsResource, setCurrentDeviceResource, type SyncResource } from '@hs/nanovdb-mr';
import { type Backend, Device, ErrorCode, HostBackend, unwrap } from '@hs/streams';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RunSession, type PoolResourceBindings } from '../src/index.js';
import { deviceChain } from './device-chain.js';

const FRAMES = 12;
const cuda0 = Device.cuda(0);

const chain = (): ReturnType<typeof deviceChain> => deviceChain(FRAMES);

/** Spies on everything `create()` could allocate; `made()` is how many such calls happened. */
function allocationCalls(backend: Backend): () => number {
  const spies = [vi.spyOn(backend, 'allocate'), vi.spyOn(backend, 'allocateAsync'), vi.spyOn(backend, 'createStream'), vi.spyOn(backend, 'createEvent')];
  return () => spies.reduce((sum, s) => sum + s.mock.calls.length, 0);
}

const expected = Array.from({ length: FRAMES }, (_, i) => (i + 2) & 0xff);

describe('graph pools from injected resources', () => {
  const backends: HostBackend[] = [];
  const make = (options: { memoryPools?: boolean; deviceCount?: number } = {}): HostBackend => {
    const backend = new HostBackend(options);
    backends.push(backend);
    return backend;
  };
  afterEach(() => {
    setCurrentDeviceResource(cuda0, null);
    for (const b of backends.splice(0)) b.dispose();
  });

  it('runs a cudaDevice graph without memory pools through AsyncFromSync(MallocResource), every block returned', async () => {
    const backend = make({ memoryPools: false });
    const { plan } = chain();
    const refused = RunSession.create(plan, { backend });
    expect(refused.ok).toBe(false);
    if (!refused.ok) {
      expect(refused.error.code).toBe(ErrorCode.NotSupported);
      expect(refused.error.message).toContain('no stream-ordered memory pools');
      expect(refused.error.message).toContain("bind one with RunSessionOptions.resources (providers['pool:source.frames'] or memoryKinds.cudaDevice)");
    }
    const malloc = new StatisticsResource(new MallocResource(backend, cuda0));
    const { plan: again, sink } = chain();
    const session = unwrap(RunSession.create(again, { backend, resources: { memoryKinds: { cudaDevice: new AsyncFromSync(backend, malloc) } } }));
    expect(malloc.statistics.allocations.current).toBe(2);
    await session.run();
    expect(sink.firstBytes).toEqual(expected);
    session.dispose();
    await vi.waitFor(() => expect(malloc.statistics.allocations.current).toBe(0));
    expect(malloc.statistics.allocations.total).toBe(2);
  });

  it('binds a provider to its own resource and leaves the other pools to the defaults', async () => {
    const backend = make();
    const counted = new StatisticsResource(new DeviceResource(backend, cuda0));
    const { plan, sink } = chain();
    const session = unwrap(RunSession.create(plan, { backend, resources: { providers: { 'pool:source.frames': counted } } }));
    const bytes = plan.pool('pool:source.frames')!.totalBytes;
    expect(counted.statistics.bytes.current).toBe(bytes);
    expect(counted.statistics.allocations.total).toBe(1);
    await session.run();
    expect(sink.firstBytes).toEqual(expected);
    session.dispose();
    expect(counted.statistics.bytes.current).toBe(0);
  });

  it('calls a resources function once with the backend the session selected, and binds what it returns', async () => {
    const seen: Backend[] = [];
    let counted: StatisticsResource<SyncResource> | null = null;
    const { plan, sink } = chain();
    const session = unwrap(
      RunSession.create(plan, {
        backend: 'host',
        resources: (backend) => {
          seen.push(backend);
          counted = new StatisticsResource(new DeviceResource(backend, cuda0));
          return { default: counted };
        },
      }),
    );
    expect(seen).toEqual([session.backend]);
    expect(counted!.statistics.allocations.current).toBe(2);
    await session.run();
    expect(sink.firstBytes).toEqual(expected);
    session.dispose();
    expect(counted!.statistics.allocations.current).toBe(0);
  });

  it('disposes the backend it selected when the resources function throws, and rethrows', () => {
    const disposed = vi.spyOn(HostBackend.prototype, 'dispose');
    expect(() =>
      RunSession.create(chain().plan, {
        backend: 'host',
        resources: () => {
          throw new Error('no resource today');
        },
      }),
    ).toThrow('no resource today');
    expect(disposed).toHaveBeenCalledTimes(1);
    disposed.mockRestore();
  });

  it('takes the process-wide current device resource when nothing is bound', () => {
    const backend = make();
    const current = new StatisticsResource(new DeviceResource(backend, cuda0));
    setCurrentDeviceResource(cuda0, current);
    const session = unwrap(RunSession.create(chain().plan, { backend }));
    expect(current.statistics.allocations.current).toBe(2);
    session.dispose();
    expect(current.statistics.allocations.current).toBe(0);
  });

  describe('refuses bad bindings before anything is allocated', () => {
    const refusal = (bindings: PoolResourceBindings, backend: Backend = make(), others: SyncResource[] = []): string => {
      const calls = allocationCalls(backend);
      const r = RunSession.create(chain().plan, { backend, resources: bindings });
      expect(calls()).toBe(0);
      for (const o of others) expect((o as StatisticsResource<SyncResource>).statistics.allocations.total).toBe(0);
      if (r.ok) throw new Error('expected create() to fail');
      expect(r.error.code).toBe(ErrorCode.InvalidArgument);
      return r.error.message;
    };

    it('a provider the plan does not have', () => {
      const backend = make();
      expect(refusal({ providers: { frames: new DeviceResource(backend, cuda0) } }, backend)).toContain(
        "resources.providers names 'frames', which no pool of plan bound has; its providers are pool:source.frames, pool:add.output",
      );
    });

    it('a resource of the wrong memory kind', () => {
      const backend = make();
      const pinned = new StatisticsResource(new PinnedResource(backend));
      expect(refusal({ default: pinned }, backend, [pinned])).toMatch(
        /pool "pool:source.frames" needs cudaDevice memory on cuda:0, but its resource hands out pinnedHost memory on cpu.*provider 'pool:source.frames', resources.default/,
      );
    });

    it('a resource of another device', () => {
      const backend = make({ deviceCount: 2 });
      const other = new StatisticsResource(new DeviceResource(backend, Device.cuda(1)));
      expect(refusal({ providers: { 'pool:add.output': other } }, backend, [other])).toMatch(/pool "pool:add.output" needs cudaDevice memory on cuda:0, but its resource hands out cudaDevice memory on cuda:1/);
    });

    it('a synchronous resource where the pool needs stream order', () => {
      const backend = make();
      const sync = new StatisticsResource(new MallocResource(backend, cuda0));
      expect(refusal({ memoryKinds: { cudaDevice: sync } }, backend, [sync])).toMatch(/needs a stream-ordered resource.*AsyncFromSync.*resources.memoryKinds.cudaDevice/);
    });

    it('throws for a value that is not a resource', () => {
      const backend = make();
      expect(() => RunSession.create(chain().plan, { backend, resources: { providers: { 'pool:add.output': {} as SyncResource } } })).toThrow(
        /resources: providers\['pool:add.output'\] is not a resource/,
      );
      expect(() => RunSession.create(chain().plan, { backend, resources: { memoryKinds: { gpu: new DeviceResource(backend, cuda0) } as never } })).toThrow(/memoryKinds.gpu is not a memory kind/);
    });
  });
});
