import { compile } from '@hs/compiler';
import { AsyncFromSync, MallocResource, PinnedResource } from '@hs/nanovdb-mr';
import { RunSession } from '@hs/runtime';
import { Device, ErrorCode, HostBackend, MemoryKind, unwrap } from '@hs/streams';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildScanToVolumeGraph, type GridBuilderKind, type ScanToVolumeOptions } from '../src/pipeline.js';
import { smallBunny } from './small-bunny.js';

const dir = mkdtempSync(join(tmpdir(), 'hs-scan-pools-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const graphOptions = (builder: GridBuilderKind, extra: Partial<ScanToVolumeOptions> = {}): ScanToVolumeOptions => smallBunny(dir, { builder, ...extra });

describe("the flagship's pools through its StatisticsResource per memory kind", () => {
  for (const builder of ['stream', 'host'] as const) {
    it(`${builder} builder: every pool backing is counted by its kind's adaptor, and all of it comes back at dispose`, async () => {
      const built = unwrap(buildScanToVolumeGraph(graphOptions(builder)));
      const plan = unwrap(compile(built.graph, built.compileOptions));
      const backend = new HostBackend();
      const session = unwrap(RunSession.create(plan, { backend, resources: built.poolResources }));
      const stats = built.poolStatistics();
      expect([...stats.keys()]).toEqual([MemoryKind.PinnedHost, MemoryKind.CudaDevice]);
      for (const [kind, counted] of stats) {
        const pools = plan.pools.filter((p) => p.memoryKind === kind && p.boundary === null);
        expect(pools.length).toBeGreaterThan(0);
        expect(counted.statistics.bytes.current).toBe(pools.reduce((sum, p) => sum + p.totalBytes, 0));
        expect(counted.statistics.allocations.current).toBe(pools.length);
      }
      const metrics = await session.run();
      expect(metrics.frames).toBe(built.frames);
      session.dispose();
      backend.dispose();
      for (const counted of stats.values()) expect(counted.statistics.bytes.current).toBe(0);
    });
  }

  it('a device without memory pools runs the flagship through AsyncFromSync(MallocResource), and the default is refused with the binding to add', async () => {
    const backend = new HostBackend({ memoryPools: false });
    const refused = (() => {
      const built = unwrap(buildScanToVolumeGraph(graphOptions('host')));
      return RunSession.create(unwrap(compile(built.graph, built.compileOptions)), { backend, resources: built.poolResources });
    })();
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.error.code).toBe(ErrorCode.NotSupported);

    const built = unwrap(
      buildScanToVolumeGraph(
        graphOptions('host', {
          poolUpstream: (b, kind) => (kind === MemoryKind.PinnedHost ? new PinnedResource(b) : new AsyncFromSync(b, new MallocResource(b, Device.cuda(0)))),
        }),
      ),
    );
    const session = unwrap(RunSession.create(unwrap(compile(built.graph, built.compileOptions)), { backend, resources: built.poolResources }));
    const metrics = await session.run();
    expect(metrics.frames).toBe(built.frames);
    expect(built.preview.previews).toBeGreaterThan(0);
    session.dispose();
    backend.dispose();
    expect(built.poolStatistics().get(MemoryKind.CudaDevice)!.statistics.allocations).toEqual({ current: 0, peak: 1, total: 1 });
  });
});
