import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GridType, HostResource, pointsToGrid } from '@hs/nanovdb-mr';
import { CudaBackend, Device, HostBackend, MemoryKind, unwrap, type DeviceMemory, type MemoryRange } from '@hs/streams';
import { afterAll, describe, expect, it } from 'vitest';
import { bunnyPoints } from '../../../examples/point-cloud-input/src/load-points.js';
import { gridPreview, previewCamera, type PreviewCamera } from '../../../examples/scan-to-volume/src/grid-preview-kernel.js';
import { runCli } from '../../../examples/scan-to-volume/src/cli.js';
import { PREVIEW_FILE, VOLUME_FILE } from '../../../examples/scan-to-volume/src/pipeline.js';

const gpu = CudaBackend.available();
if (!gpu) console.log('scan-to-volume GPU tests skipped: no CUDA device or @hs/cuda-native not built');

const whole = (memory: DeviceMemory, byteLength = memory.byteSize): MemoryRange => ({ memory, byteOffset: 0, byteLength, label: 'test' });
const fake = (n: number): MemoryRange => ({ memory: { byteSize: n } as DeviceMemory, byteOffset: 0, byteLength: n, label: 'host' });

/** The OnIndex grid bytes of index points (or of the bunny at `voxelSize` when `coords` is omitted). */
function gridBytes(coords?: Int32Array, voxelSize = 0.2): Uint8Array {
  const backend = new HostBackend();
  const points = coords === undefined ? { space: 'world' as const, positions: bunnyPoints().positions } : { space: 'index' as const, coords };
  const handle = unwrap(pointsToGrid(backend, new HostResource(backend), points, { gridType: GridType.OnIndex, voxelSize }));
  const bytes = unwrap(handle.hostBytes()).slice();
  handle.dispose();
  backend.dispose();
  return bytes;
}

function hostPreview(grid: Uint8Array, camera: PreviewCamera): Uint8Array {
  const launch = gridPreview(fake(grid.byteLength), fake(camera.width * camera.height), camera);
  const image = new Uint8Array(camera.width * camera.height);
  launch.host([grid], [image], launch.params);
  return image;
}

describe.skipIf(!gpu)('hs.gridPreview on CUDA matches the host implementation byte for byte', () => {
  const backend = gpu ? unwrap(CudaBackend.create()) : (null as never);
  afterAll(() => backend?.dispose());

  async function devicePreview(grid: Uint8Array, camera: PreviewCamera, gridKind: MemoryKind): Promise<Uint8Array> {
    const device = backend.devices[0] as Device;
    const s = unwrap(backend.createStream(device, { label: 'preview' }));
    const src = unwrap(backend.allocate({ kind: gridKind, device: gridKind === MemoryKind.PinnedHost ? Device.cpu() : device, byteSize: grid.byteLength }));
    const bytes = camera.width * camera.height;
    const dst = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device, byteSize: bytes }));
    unwrap(backend.copyFromHostAsync(s, whole(src), grid));
    unwrap(backend.memsetAsync(s, whole(dst), 0x5a)); // stale bytes the kernel must clear
    unwrap(backend.launchKernel(s, gridPreview(whole(src), whole(dst), camera)));
    const out = new Uint8Array(bytes);
    unwrap(backend.copyToHostAsync(s, out, whole(dst)));
    await backend.synchronizeStream(s);
    backend.free(src);
    backend.free(dst);
    backend.destroyStream(s);
    return out;
  }

  const cases: [string, () => Uint8Array, PreviewCamera][] = [
    ['the bunny at voxel 0.2 (magnified)', () => gridBytes(), previewCamera({ min: [-25, 0, -19], max: [25, 48, 19] })],
    ['a 3000-cell-wide box (reduced 3x, shared pixels)', () => gridBytes(Int32Array.from([0, 0, 0, 2999, 10, 3, 1500, 700, 1, 1501, 700, 2, -3, -2, 0])), previewCamera({ min: [-3, -2, 0], max: [2999, 700, 3] })],
    ['voxels outside the camera (clipped)', () => gridBytes(Int32Array.from([-50, 0, 0, 5, 5, 5, 40, -9, 99])), previewCamera({ min: [0, 0, 0], max: [9, 9, 9] })],
    ['bytes that are not an OnIndex grid', () => new Uint8Array(4096).fill(3), previewCamera({ min: [0, 0, 0], max: [7, 7, 7] })],
  ];
  for (const [name, grid, camera] of cases) {
    for (const kind of [MemoryKind.CudaDevice, MemoryKind.PinnedHost]) {
      it(`${name}, grid in ${kind}`, async () => {
        const bytes = grid();
        const expected = hostPreview(bytes, camera);
        const got = await devicePreview(bytes, camera, kind);
        expect(Buffer.compare(Buffer.from(got), Buffer.from(expected))).toBe(0);
      });
    }
  }
});

describe.skipIf(!gpu)('scan-to-volume on CUDA writes the same files as on the host backend', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hs-scan-to-volume-gpu-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Runs the example's command line in-process (two sweeps of 36 scans); returns what it printed. */
  async function run(backend: 'cuda' | 'host', builder: 'stream' | 'host'): Promise<string> {
    const logs: string[] = [];
    const errors: string[] = [];
    const out = join(dir, `${backend}-${builder}`);
    const code = await runCli(['--backend', backend, '--builder', builder, '--sweeps', '2', '--rate', '1000', '--out', out], { log: (l) => logs.push(l), error: (l) => errors.push(l) });
    expect(errors).toEqual([]);
    expect(code).toBe(0);
    return logs.join('\n');
  }

  it('preview.png and volume.nvdb are byte-identical: stream builder on cuda (GPU kernels), stream and host builders on host', async () => {
    const runs = { 'cuda-stream': await run('cuda', 'stream'), 'host-stream': await run('host', 'stream'), 'host-host': await run('host', 'host') };
    expect(runs['cuda-stream']).toContain('backend: cuda');
    expect(runs['host-stream']).toContain('backend: host');
    for (const text of [runs['cuda-stream'], runs['host-stream']]) {
      expect(text).toMatch(/builder: stream, one bounded build per scan .* no capacity overflowed; 1839 re-delivered points of later sweeps not appended/);
      expect(text).toMatch(/resource \(StatisticsResource\): 1 allocations \(0 outstanding\)/);
    }
    for (const text of Object.values(runs)) {
      expect(text).toContain('18 previews rendered');
      expect(text).toMatch(/re-read by hs: .* checksum and structure valid/);
      expect(text).toMatch(/\(0 outstanding\).* 0 bytes outstanding/);
    }
    console.log(runs['cuda-stream'].split('\n').find((line) => line.startsWith('builder: ')));
    for (const file of [PREVIEW_FILE, VOLUME_FILE]) {
      const [a, b, c] = (['cuda-stream', 'host-stream', 'host-host'] as const).map((name) => readFileSync(join(dir, name, file)));
      const same = Buffer.compare(a!, b!) === 0 && Buffer.compare(a!, c!) === 0;
      console.log(`scan-to-volume ${file}: cuda stream ${a!.byteLength} bytes, host stream ${b!.byteLength} bytes, host builder ${c!.byteLength} bytes, identical ${same}`);
      expect(same).toBe(true);
    }
  }, 180_000);
});
