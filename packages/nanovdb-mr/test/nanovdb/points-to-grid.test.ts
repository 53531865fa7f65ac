import { describe, expect, it } from 'vitest';
import { Device, ErrorCode, HostBackend, OK_VOID, unwrap, type MemoryRange, type Result } from '@hs/streams';
import {
  AsyncFromSync,
  BufferView,
  DeviceResource,
  GridHandle,
  GridType,
  HostResource,
  ManagedResource,
  StatisticsResource,
  pointsToGrid,
  validateGrids,
  voxelsToGrid,
  type SyncResource,
} from '../../src/index.js';

/** A bitwise CRC32 (reflected 0xEDB88320), independent of zlib, to cross-check the checksum. */
function referenceCrc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const b of bytes) {
    crc ^= b;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return ~crc >>> 0;
}

/**
 * pointsToGrid does not validate the grid it wrote (the trusted path: its handle's metadata come from the headers), so
 * every grid these tests check is validated here, checksum included, and the handle's metadata held to validation's.
 */
function expectValid(handle: GridHandle): void {
  expect(unwrap(validateGrids(unwrap(handle.hostBytes())))).toEqual([handle.grid()]);
}

function build(points: Int32Array, gridType: GridType.Float | GridType.OnIndex, backend = new HostBackend()) {
  const handle = unwrap(pointsToGrid(backend, new HostResource(backend), { space: 'index', coords: points }, { gridType, name: 'test grid' }));
  expectValid(handle);
  const bytes = unwrap(handle.hostBytes());
  return { backend, handle, bytes, v: new DataView(bytes.buffer, bytes.byteOffset, bytes.length) };
}

describe('pointsToGrid (host): hand-checked layout', () => {
  it('one point in an OnIndex grid: sizes, offsets, masks, index, checksum', () => {
    const { handle, bytes, v } = build(new Int32Array([1, 2, 3, 1, 2, 3]), GridType.OnIndex);
    // 736 header + 96 root + 32 tile + 270400 upper + 33856 lower + 96 leaf
    expect(bytes.length).toBe(305216);
    expect(v.getBigUint64(0, true)).toBe(0x314244566f6e614en);
    expect(v.getUint32(16, true)).toBe(0x04002402);
    expect(v.getUint32(20, true)).toBe(2 | 32);
    expect(v.getBigUint64(32, true)).toBe(305216n);
    expect(new TextDecoder().decode(bytes.subarray(40, 49))).toBe('test grid');
    expect([v.getUint32(632, true), v.getUint32(636, true)]).toEqual([8, 20]);
    expect(v.getBigInt64(640, true)).toBe(305216n); // no blind data
    expect(v.getBigUint64(656, true)).toBe(2n); // background slot + one value
    // TreeData: offsets from byte 672
    expect([0, 8, 16, 24].map((o) => v.getBigInt64(672 + o, true))).toEqual([305120n - 672n, 271264n - 672n, 864n - 672n, 64n]);
    expect([v.getUint32(704, true), v.getUint32(708, true), v.getUint32(712, true)]).toEqual([1, 1, 1]);
    expect(v.getBigUint64(728, true)).toBe(1n);
    // Root: bbox, one tile with key 0 pointing at the upper node 128 bytes after the root
    expect([v.getInt32(736, true), v.getInt32(740, true), v.getInt32(744, true), v.getInt32(748, true)]).toEqual([1, 2, 3, 1]);
    expect(v.getUint32(760, true)).toBe(1);
    expect(v.getBigUint64(832, true)).toBe(0n);
    expect(v.getBigInt64(840, true)).toBe(128n);
    // Upper at 864: flags HasBBox, child 0 set, table[0] -> lower 270400 bytes on
    expect(v.getBigUint64(864 + 24, true)).toBe(2n);
    expect(bytes[864 + 4128]).toBe(1);
    expect(v.getBigInt64(864 + 8256, true)).toBe(270400n);
    // Lower at 271264: child 0 set, table[0] -> leaf 33856 bytes on
    expect(bytes[271264 + 544]).toBe(1);
    expect(v.getBigInt64(271264 + 1088, true)).toBe(33856n);
    // Leaf at 305120: bbox min (1,2,3), dif 0, flags 2, voxel n = 1<<6|2<<3|3 = 83 -> mask byte 10 bit 3
    const leaf = 305120;
    expect([v.getInt32(leaf, true), v.getInt32(leaf + 4, true), v.getInt32(leaf + 8, true)]).toEqual([1, 2, 3]);
    expect([bytes[leaf + 12], bytes[leaf + 13], bytes[leaf + 14], bytes[leaf + 15]]).toEqual([0, 0, 0, 2]);
    expect(bytes[leaf + 16 + 10]).toBe(1 << 3);
    expect(v.getBigUint64(leaf + 80, true)).toBe(1n); // offset: 1 + voxels of earlier leaves
    let prefix = 0n;
    for (let w = 1; w < 7; w++) prefix |= 1n << BigInt(9 * w); // word 1 holds the voxel: counts after words 1..6 are 1
    expect(v.getBigUint64(leaf + 88, true)).toBe(prefix);
    // Checksum: head over [16, 736), tail over 4 KiB blocks of [736, end)
    expect(v.getUint32(8, true)).toBe(referenceCrc32(bytes.subarray(16, 736)));
    const tail = bytes.subarray(736);
    const blocks = Math.floor(tail.length / 4096);
    const crcs = new Uint8Array(4 * blocks);
    for (let i = 0; i < blocks; i++) {
      new DataView(crcs.buffer).setUint32(4 * i, referenceCrc32(tail.subarray(4096 * i, i + 1 === blocks ? tail.length : 4096 * (i + 1))), true);
    }
    expect(v.getUint32(12, true)).toBe(referenceCrc32(crcs));
    // Accessor
    const acc = unwrap(handle.accessor());
    expect([acc.getValue(1, 2, 3), acc.getValue(1, 2, 4), acc.getValue(-5000, 0, 0)]).toEqual([1, 0, 0]);
    expect([acc.isActive(1, 2, 3), acc.isActive(0, 0, 0)]).toEqual([true, false]);
    expect(handle.grid()?.worldBBox).toEqual({ min: [1, 2, 3], max: [2, 3, 4] });
    handle.dispose();
  });

  it('sorts root tiles by key biased by 2^31, so negative coordinates come first', () => {
    const { handle, v } = build(new Int32Array([5000, 0, 0, -1, 0, 0]), GridType.OnIndex);
    expect(v.getUint32(760, true)).toBe(2);
    expect(v.getBigUint64(832, true)).toBe(0xfffffn << 42n); // tile of x = -1
    expect(v.getBigUint64(864, true)).toBe(1n << 42n); // tile of x = 5000
    const acc = unwrap(handle.accessor());
    expect([acc.getValue(-1, 0, 0), acc.getValue(5000, 0, 0)]).toEqual([1, 2]);
    expect(handle.grid()?.indexBBox).toEqual({ min: [-1, 0, 0], max: [5000, 0, 0] });
    handle.dispose();
  });

  it('Float grids hold 1.0 at active voxels and the background 0 elsewhere', () => {
    const { handle, bytes } = build(new Int32Array([0, 0, 0, 7, 7, 7, 8, 0, 0]), GridType.Float);
    expect(bytes.length).toBe(736 + 64 + 32 + 270400 + 33856 + 2 * 2144);
    const acc = unwrap(handle.accessor());
    expect([acc.getValue(0, 0, 0), acc.getValue(7, 7, 7), acc.getValue(8, 0, 0), acc.getValue(1, 0, 0)]).toEqual([1, 1, 1, 0]);
    const seen: number[][] = [];
    acc.forEachActiveVoxel((x, y, z, value) => seen.push([x, y, z, value]));
    expect(seen).toEqual([[0, 0, 0, 1], [7, 7, 7, 1], [8, 0, 0, 1]]);
    expect(handle.grid()?.gridClass).toBe(0);
    handle.dispose();
  });

  it('OnIndex values index active voxels densely in leaf order (offset + prefix sums)', () => {
    const coords: number[] = [];
    for (let x = 0; x < 20; x += 3) for (let y = 0; y < 9; y += 2) for (let z = 0; z < 9; z += 4) coords.push(x, y, z);
    const { handle } = build(new Int32Array(coords), GridType.OnIndex);
    const acc = unwrap(handle.accessor());
    const indices: number[] = [];
    acc.forEachActiveVoxel((x, y, z, index) => {
      expect(acc.getValue(x, y, z)).toBe(index);
      indices.push(index);
    });
    expect(indices).toEqual(Array.from({ length: coords.length / 3 }, (_, i) => i + 1));
    expect(handle.grid()?.valueCount).toBe(coords.length / 3 + 1);
    handle.dispose();
  });

  it('maps world-space points through voxel size and origin, rounding to the nearest voxel', () => {
    const backend = new HostBackend();
    const handle = unwrap(
      pointsToGrid(backend, new HostResource(backend), { space: 'world', positions: new Float64Array([1.26, 1, 1, 0.74, 1, 1]) }, { gridType: GridType.Float, voxelSize: 0.5, origin: [1, 1, 1] }),
    );
    expectValid(handle);
    const acc = unwrap(handle.accessor());
    expect([acc.isActive(1, 0, 0), acc.isActive(-1, 0, 0), acc.isActive(0, 0, 0)]).toEqual([true, true, false]);
    expect(handle.grid()?.voxelSize).toEqual([0.5, 0.5, 0.5]);
    expect(handle.grid()?.worldBBox).toEqual({ min: [0.5, 1, 1], max: [2, 1.5, 1.5] });
    handle.dispose();
  });

  it('builds an empty grid from no points', () => {
    const { handle, bytes } = build(new Int32Array(0), GridType.OnIndex);
    expect(bytes.length).toBe(736 + 96);
    expect(handle.grid()?.voxelCount).toBe(0);
    expect(unwrap(handle.accessor()).getValue(0, 0, 0)).toBe(0);
    handle.dispose();
  });
});

describe('pointsToGrid checksum modes', () => {
  it('partial stores the head only, disabled stores all ones; both validate', () => {
    const backend = new HostBackend();
    const coords = new Int32Array([3, 4, 5]);
    for (const [mode, tailIsNone, headIsNone] of [['partial', true, false], ['disabled', true, true], ['full', false, false]] as const) {
      const handle = unwrap(pointsToGrid(backend, new HostResource(backend), { space: 'index', coords }, { gridType: GridType.Float, checksum: mode }));
      const { head, tail } = handle.grid()!.checksum;
      expect([tail === 0xffffffff, head === 0xffffffff]).toEqual([tailIsNone, headIsNone]);
      expectValid(handle);
      handle.dispose();
    }
  });
});

describe('pointsToGrid: bad input and resources', () => {
  it('rejects NaN and infinite world points, naming the first, and leaks nothing', () => {
    const backend = new HostBackend();
    const stats = new StatisticsResource(new HostResource(backend));
    for (const bad of [NaN, Infinity, -Infinity]) {
      const r = pointsToGrid(backend, stats, { space: 'world', positions: new Float32Array([0, 0, 0, 1, bad, 0]) }, { gridType: GridType.OnIndex });
      expect(!r.ok && r.error.code).toBe(ErrorCode.InvalidArgument);
      if (!r.ok) expect(r.error.message).toContain('point 1 has a non-finite coordinate');
    }
    const far = pointsToGrid(backend, stats, { space: 'world', positions: new Float64Array([1e12, 0, 0]) }, { gridType: GridType.OnIndex });
    expect(!far.ok && far.error.code).toBe(ErrorCode.InvalidArgument);
    expect(stats.statistics.allocations.current).toBe(0);
    expect(stats.statistics.allocations.total).toBeGreaterThan(0);
  });

  it('rejects more than 2^32 points and malformed options with typed errors', () => {
    const backend = new HostBackend();
    const host = new HostResource(backend);
    const huge = { space: 'index', coords: { length: 3 * (2 ** 32 + 1) } as unknown as Int32Array } as const;
    const r = pointsToGrid(backend, host, huge, { gridType: GridType.OnIndex });
    expect(!r.ok && r.error.code).toBe(ErrorCode.InvalidArgument);
    const ragged = pointsToGrid(backend, host, { space: 'index', coords: new Int32Array(4) }, { gridType: GridType.OnIndex });
    expect(!ragged.ok && ragged.error.code).toBe(ErrorCode.InvalidArgument);
    const size = pointsToGrid(backend, host, { space: 'index', coords: new Int32Array(3) }, { gridType: GridType.OnIndex, voxelSize: 0 });
    expect(!size.ok && size.error.code).toBe(ErrorCode.InvalidArgument);
    const text = pointsToGrid(backend, host, { space: 'index', coords: new Int32Array(3) }, { gridType: GridType.OnIndex, voxelSize: '0.5' as unknown as number });
    expect(!text.ok && text.error.message).toBe("InvalidArgument: pointsToGrid: voxelSize must be a positive finite number, got the string '0.5'");
    // the float32 map holds the voxel size and its inverse: both must stay normal, finite float32 numbers
    for (const voxelSize of [1e-300, 1e-39, 3.5e38, 1e300]) {
      const outside = pointsToGrid(backend, host, { space: 'world', positions: new Float32Array(3) }, { gridType: GridType.OnIndex, voxelSize });
      expect(!outside.ok && outside.error.message).toBe(`InvalidArgument: pointsToGrid: voxelSize ${voxelSize} is outside 2^-126..2^126 (about 1.2e-38 to 8.5e37): the grid's float32 map stores the voxel size and its inverse, which would become 0 or Infinity`);
    }
    for (const voxelSize of [2 ** -126, 2 ** 126]) unwrap(pointsToGrid(backend, host, { space: 'world', positions: new Float32Array(3) }, { gridType: GridType.OnIndex, voxelSize })).dispose();
    expect(() => pointsToGrid(null as never, host, { space: 'index', coords: new Int32Array(3) }, { gridType: GridType.OnIndex })).toThrow('ResourceBuffer.allocate: backend must be a Backend (a HostBackend or a CudaBackend), got null');
    const type = pointsToGrid(backend, host, { space: 'index', coords: new Int32Array(3) }, { gridType: 7 as GridType.Float });
    expect(!type.ok && type.error.code).toBe(ErrorCode.InvalidArgument);
    expect(() => pointsToGrid(backend, host, { space: 'index', coords: [1, 2, 3] as unknown as Int32Array }, { gridType: GridType.OnIndex })).toThrow(/Int32Array/);
    // The element type must match the declared space: world positions in an Int32Array used to be taken
    // as voxel coordinates (voxelSize ignored), index coordinates in a Float32Array were scaled.
    expect(() => pointsToGrid(backend, host, { space: 'world', positions: new Int32Array([10, 0, 0]) as unknown as Float32Array }, { gridType: GridType.OnIndex, voxelSize: 0.5 })).toThrow(
      /coordinates must be an Int32Array \(index space\) or a Float32Array\/Float64Array \(world space\)/,
    );
    expect(() => pointsToGrid(backend, host, { space: 'index', coords: new Float32Array([10, 0, 0]) as unknown as Int32Array }, { gridType: GridType.OnIndex })).toThrow(/Int32Array \(index space\)/);
  });

  it('end to end on AsyncFromSync over a stateful counting sync resource: allocations == deallocations', async () => {
    const backend = new HostBackend();
    const host = new ManagedResource(backend, Device.cuda(0));
    let allocations = 0;
    let deallocations = 0;
    const counting: SyncResource = {
      hostAccessible: true,
      deviceAccessible: true,
      allocate(bytes, alignment): Result<MemoryRange | null> {
        const r = host.allocate(bytes, alignment);
        if (r.ok) allocations++;
        return r;
      },
      deallocate(block, bytes, alignment) {
        const r = host.deallocate(block, bytes, alignment);
        if (r.ok) deallocations++;
        return r.ok ? OK_VOID : r;
      },
    };
    const lifted = new AsyncFromSync(backend, counting);
    const coords = new Int32Array(3000).map((_, i) => (i * 7919) % 300);
    const handle = unwrap(pointsToGrid(backend, lifted, { space: 'index', coords }, { gridType: GridType.OnIndex }));
    expectValid(handle);
    expect(allocations - deallocations).toBe(1); // only the grid is still held
    handle.dispose();
    expect(allocations).toBe(deallocations);
    expect(allocations).toBe(2); // one workspace block, one grid
  });

  it('refuses a resource the host cannot read, leaving nothing allocated', () => {
    const backend = new HostBackend();
    const stats = new StatisticsResource(new DeviceResource(backend, Device.cuda(0)));
    const r = pointsToGrid(backend, stats, { space: 'world', positions: new Float32Array(3) }, { gridType: GridType.OnIndex });
    expect(!r.ok && r.error.code).toBe(ErrorCode.NotSupported);
    expect(stats.statistics.allocations).toMatchObject({ current: 0, total: 1 });
  });
});

describe('GridHandle', () => {
  it('wraps external memory zero-copy through a BufferView and copies host <-> device without a kernel', async () => {
    const { backend, handle, bytes } = build(new Int32Array([1, 1, 1, 100, 200, 300]), GridType.Float);
    const external = unwrap(backend.allocate({ kind: 'cudaManaged' as never, device: Device.cuda(0), byteSize: bytes.length }));
    unwrap(backend.hostView(external)).set(bytes);
    const view = unwrap(BufferView.of({ memory: external, byteOffset: 0, byteLength: bytes.length, label: 'onnx blob' }, bytes.length));
    const wrapped = unwrap(GridHandle.fromHostBytes(backend, view));
    expect(unwrap(wrapped.hostBytes()).buffer).toBe(unwrap(backend.hostView(external)).buffer);
    const stream = unwrap(backend.createStream(Device.cuda(0)));
    const onDevice = unwrap(wrapped.copyTo(stream));
    expect(onDevice.memoryKind).toBe('cudaDevice');
    expect(onDevice.hostBytes().ok).toBe(false);
    expect(onDevice.grids).toBe(wrapped.grids);
    const back = unwrap(onDevice.copyTo(stream));
    expect(back.memoryKind).toBe('pinnedHost');
    await backend.synchronizeStream(stream);
    expect(Buffer.from(unwrap(back.hostBytes())).equals(Buffer.from(bytes))).toBe(true);
    expect(unwrap(validateGrids(unwrap(back.hostBytes()))).length).toBe(1);
    wrapped.dispose();
    expect(external.freed).toBe(false); // a view never frees
    back.dispose();
    onDevice.dispose();
    handle.dispose();
  });
});

describe('pointsToGrid gridClass option', () => {
  const backend = new HostBackend();
  const coords = new Int32Array([0, 0, 0, 3, 4, 5]);
  it('declares the class it is given when it fits the type, and IndexGrid / Unknown by default', () => {
    const fog = unwrap(pointsToGrid(backend, new HostResource(backend), { space: 'index', coords }, { gridType: GridType.Float, gridClass: 2 }));
    expect(fog.grid()!.gridClass).toBe(2);
    const plain = unwrap(pointsToGrid(backend, new HostResource(backend), { space: 'index', coords }, { gridType: GridType.Float }));
    expect(plain.grid()!.gridClass).toBe(0);
    const index = unwrap(pointsToGrid(backend, new HostResource(backend), { space: 'index', coords }, { gridType: GridType.OnIndex }));
    expect(index.grid()!.gridClass).toBe(8);
    for (const g of [fog, plain, index]) expectValid(g);
  });

  it('refuses a class that does not fit the type, or is out of range, naming the option', () => {
    for (const gridClass of [1, 11]) {
      const r = pointsToGrid(backend, new HostResource(backend), { space: 'index', coords }, { gridType: GridType.OnIndex, gridClass });
      expect(r.ok ? '' : r.error.message).toContain('pointsToGrid: gridClass');
    }
  });
});

describe('pointsToGrid background option', () => {
  const backend = new HostBackend();
  // voxels in one leaf, in other leaves of the same lower node, and in other root tiles
  const coords = new Int32Array([0, 0, 0, 3, 4, 5, 20, 0, 0, 300, 0, 0, -5000, 4100, 9000]);

  it('writes the background where NanoVDB writes it, and the accessor reads it for every inactive voxel', () => {
    const grid = unwrap(pointsToGrid(backend, new HostResource(backend), { space: 'index', coords }, { gridType: GridType.Float, background: -3.25 }));
    expectValid(grid);
    const a = unwrap(grid.accessor());
    expect([a.getValue(0, 0, 0), a.getValue(3, 4, 5), a.getValue(-5000, 4100, 9000)]).toEqual([1, 1, 1]);
    // inactive: in a populated leaf, in a lower node's tile, in an upper node's tile, outside every root tile
    expect([a.getValue(1, 1, 1), a.getValue(60, 0, 0), a.getValue(1000, 0, 0), a.getValue(100000, 5, 5)]).toEqual([-3.25, -3.25, -3.25, -3.25]);
    // byte for byte the Float grid voxelsToGrid writes of the same voxels, 1.0 each, over the same background
    const same = unwrap(voxelsToGrid(backend, new HostResource(backend), { coords, values: new Float32Array(5).fill(1) }, { gridType: GridType.Float, background: -3.25 }));
    expect(Buffer.from(unwrap(grid.hostBytes())).equals(Buffer.from(unwrap(same.hostBytes())))).toBe(true);
    grid.dispose();
    same.dispose();
  });

  it('rounds to f32, defaults to 0 and refuses a non-finite one or one on an OnIndex grid, naming the option', () => {
    const g = unwrap(pointsToGrid(backend, new HostResource(backend), { space: 'index', coords }, { gridType: GridType.Float, background: 0.1 }));
    expect(unwrap(g.accessor()).getValue(1, 1, 1)).toBe(Math.fround(0.1));
    const plain = unwrap(pointsToGrid(backend, new HostResource(backend), { space: 'index', coords }, { gridType: GridType.Float }));
    expect(unwrap(plain.accessor()).getValue(1, 1, 1)).toBe(0);
    for (const options of [{ gridType: GridType.Float, background: Number.NaN }, { gridType: GridType.OnIndex, background: 2 }] as const) {
      const r = pointsToGrid(backend, new HostResource(backend), { space: 'index', coords }, options);
      expect(r.ok ? '' : r.error.code).toBe(ErrorCode.InvalidArgument);
      expect(r.ok ? '' : r.error.message).toContain('pointsToGrid: background');
    }
  });
});
