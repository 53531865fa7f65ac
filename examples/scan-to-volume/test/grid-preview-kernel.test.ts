import { GridType, HostResource, pointsToGrid } from '@hs/nanovdb-mr';
import { type DeviceMemory, HostBackend, type MemoryRange, unwrap } from '@hs/streams';
import { bunnyPoints } from '@hs/example-point-cloud-input';
import { describe, expect, it } from 'vitest';
import { FAR_SHADE, MAX_PREVIEW_SIDE, gridPreview, previewCamera, type PreviewCamera } from '../src/grid-preview-kernel.js';
import { referencePreview } from './reference-preview.js';

const fake = (n: number): MemoryRange => ({ memory: { byteSize: n } as DeviceMemory, byteOffset: 0, byteLength: n, label: 'test' });

function gridOf(positions: Float64Array | Int32Array, voxelSize = 1): Uint8Array {
  const backend = new HostBackend();
  const points = positions instanceof Int32Array ? { space: 'index' as const, coords: positions } : { space: 'world' as const, positions };
  const handle = unwrap(pointsToGrid(backend, new HostResource(backend), points, { gridType: GridType.OnIndex, voxelSize }));
  const bytes = unwrap(handle.hostBytes()).slice();
  handle.dispose();
  backend.dispose();
  return bytes;
}

function render(grid: Uint8Array, camera: PreviewCamera): Uint8Array {
  const launch = gridPreview(fake(grid.byteLength), fake(camera.width * camera.height), camera);
  const image = new Uint8Array(camera.width * camera.height).fill(7); // stale bytes the kernel must clear
  launch.host([grid], [image], launch.params);
  return image;
}

describe('hs.gridPreview host implementation', () => {
  it('renders the bunny exactly as an independent render through GridAccessor', () => {
    const grid = gridOf(bunnyPoints().positions as Float64Array, 0.2);
    const [min, max] = [[-25, 0, -19], [25, 48, 19]] as const;
    const camera = previewCamera({ min, max });
    const image = render(grid, camera);
    expect(Buffer.compare(image, referencePreview(grid, camera))).toBe(0);
    const lit = image.filter((v) => v > 0).length;
    expect(lit / image.length).toBeGreaterThan(0.2);
    expect(lit / image.length).toBeLessThan(0.8);
    expect(new Set(image).size).toBeGreaterThan(20);
  });

  it('shades by depth: nearer (larger z) is brighter, the farthest is FAR_SHADE, the nearest 255', () => {
    const grid = gridOf(Int32Array.from([0, 0, 0, 1, 0, 10, 2, 0, 5]));
    const camera = previewCamera({ min: [0, 0, 0], max: [2, 0, 10] });
    expect(camera.zoomNumerator).toBe(170);
    const image = render(grid, camera);
    expect([image[0], image[170], image[340]]).toEqual([FAR_SHADE, 255, FAR_SHADE + Math.floor((199 * 5) / 10)]);
    expect(image[camera.width - 1]).toBe(0); // padding column beyond the last cell
  });

  it('keeps the nearest voxel of a column, whatever the order', () => {
    const grid = gridOf(Int32Array.from([3, 4, 9, 3, 4, 2, 3, 4, 6]));
    const camera = previewCamera({ min: [3, 4, 2], max: [3, 4, 9] });
    expect(new Set(render(grid, camera))).toEqual(new Set([255]));
  });

  it('reduces a box wider than MAX_PREVIEW_SIDE cells and still matches the reference', () => {
    const coords = Int32Array.from([0, 0, 0, 2999, 10, 3, 1500, 700, 1, 1501, 700, 2, -3, -2, 0]);
    const grid = gridOf(coords);
    const camera = previewCamera({ min: [-3, -2, 0], max: [2999, 700, 3] });
    expect(camera.zoomDenominator).toBe(3);
    expect(camera.width).toBeLessThanOrEqual(MAX_PREVIEW_SIDE);
    const image = render(grid, camera);
    expect(Buffer.compare(image, referencePreview(grid, camera))).toBe(0);
    expect(image.filter((v) => v > 0).length).toBe(4); // two voxels share one reduced pixel
  });

  it('renders nothing for bytes that are not an OnIndex grid', () => {
    const camera = previewCamera({ min: [0, 0, 0], max: [3, 3, 3] });
    expect(render(new Uint8Array(2048), camera).every((v) => v === 0)).toBe(true);
  });

  it('rejects a camera it cannot draw with and a short image range', () => {
    const camera = previewCamera({ min: [0, 0, 0], max: [3, 3, 3] });
    expect(() => gridPreview(fake(1), fake(camera.width * camera.height - 1), camera)).toThrow(/needs/);
    expect(() => gridPreview(fake(1), fake(1 << 20), { ...camera, width: camera.width + 1 })).toThrow(/multiple of 4/);
    expect(() => previewCamera({ min: [0, 0, 1], max: [3, 3, 0] })).toThrow(/min <= max/);
  });
});
