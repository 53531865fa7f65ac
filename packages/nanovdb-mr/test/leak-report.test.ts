import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Device, HostBackend, leakCounts, unwrap } from '@hs/streams';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { DeviceResource, GridType, HostResource, ResourceBuffer, StatisticsResource, pointsToGrid } from '../src/index.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Collects until `done()` holds (finalizers run on later turns), at most 50 rounds. */
async function collectUntil(done: () => boolean): Promise<void> {
  for (let round = 0; round < 50 && !done(); round++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
}

const leaked = (): number => leakCounts().ResourceBuffer ?? 0;

describe('ResourceBuffers dropped without dispose() are reported and freed', () => {
  const backend = new HostBackend();
  afterAll(() => backend.dispose());

  it('HS_LEAK_REPORT=0: a dropped host buffer is counted and freed, and no warning is printed', async () => {
    const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    vi.stubEnv('HS_LEAK_REPORT', '0');
    const host = new StatisticsResource(new HostResource(backend));
    const before = leaked();
    (() => void unwrap(ResourceBuffer.allocate(backend, host, 4096)))();
    await collectUntil(() => host.statistics.bytes.current === 0);
    await new Promise((r) => setImmediate(r));
    expect(host.statistics.bytes.current).toBe(0);
    expect(leaked()).toBe(before + 1);
    expect(warnings).not.toHaveBeenCalled();
    vi.unstubAllEnvs();
    warnings.mockRestore();
  });

  it('300 dropped 1 MiB device buffers: freed on their retained stream, counted, one HS_LEAK warning; disposed ones are not counted', async () => {
    const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const device = new StatisticsResource(new DeviceResource(backend, Device.cuda(0)));
    const stream = unwrap(backend.createStream(Device.cuda(0), { label: 'leaky' }));
    const kept = unwrap(ResourceBuffer.allocateAsync(backend, stream, device, 1 << 20, { noInit: true }));
    kept.dispose();
    const before = leaked();
    (() => {
      for (let i = 0; i < 300; i++) unwrap(ResourceBuffer.allocateAsync(backend, stream, device, 1 << 20, { noInit: true }));
    })();
    expect(device.statistics.bytes.current).toBe(300 << 20);
    await collectUntil(() => leaked() === before + 300);
    await vi.waitFor(() => expect(device.statistics.bytes.current).toBe(0));
    expect(leaked()).toBe(before + 300);
    await vi.waitFor(() => expect(warnings).toHaveBeenCalledTimes(1));
    const [message, options] = warnings.mock.calls[0] as [string, { code: string }];
    expect(options.code).toBe('HS_LEAK');
    expect(message).toMatch(/^\d+ ResourceBuffer object\(s\) were garbage-collected without dispose\(\) \(1048576 bytes/);
    expect(message).toContain('HS_LEAK_REPORT=0 to silence');
    backend.destroyStream(stream);
    warnings.mockRestore();
  });

  it('a dropped GridHandle is counted under its own class, and its owned buffer is freed through the buffer report', async () => {
    const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const host = new StatisticsResource(new HostResource(backend));
    const before = leakCounts().GridHandle ?? 0;
    (() => void unwrap(pointsToGrid(backend, host, { space: 'index', coords: Int32Array.from([0, 0, 0, 9, 9, 9]) }, { gridType: GridType.OnIndex, name: 'dropped' })))();
    expect(host.statistics.bytes.current).toBeGreaterThan(0);
    await collectUntil(() => (leakCounts().GridHandle ?? 0) > before && host.statistics.bytes.current === 0);
    expect(leakCounts().GridHandle).toBe(before + 1);
    expect(host.statistics.bytes.current).toBe(0);
    await vi.waitFor(() => expect(warnings).toHaveBeenCalledWith(expect.stringMatching(/^1 GridHandle object\(s\) .*\(grid "dropped" \(\d+ bytes\)\)/), { code: 'HS_LEAK' }));
    warnings.mockRestore();
  });
});
