import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ErrorCode, HostBackend, HsError, unwrap } from '@hs/streams';
import { GridAccessor, GridHandle, GridType, HostResource, computeChecksum, decodeNvdb, encodeNvdb, gridBlindMetadata, gridStatistics, pointsToGrid, readBlindData, readNvdb, validateGrids, writeNvdb } from '../../src/index.js';

const backend = new HostBackend();
const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a.buffer, a.byteOffset, a.length).equals(Buffer.from(b.buffer, b.byteOffset, b.length));
const resource = new HostResource(backend);

function gridBytes(gridType: GridType.Float | GridType.OnIndex, coords: number[], name = 'g'): Uint8Array {
  const handle = unwrap(pointsToGrid(backend, resource, { space: 'index', coords: new Int32Array(coords) }, { gridType, name }));
  const copy = unwrap(handle.hostBytes()).slice();
  handle.dispose();
  return copy;
}

const small = gridBytes(GridType.OnIndex, [0, 0, 0, 9, 9, 9, -20, 3, 4000]);

function expectField(bytes: Uint8Array, field: string, code = ErrorCode.InvalidArgument): void {
  const r = validateGrids(bytes);
  expect(r.ok).toBe(false);
  if (!r.ok) {
    expect(r.error.code).toBe(code);
    expect(r.error.message).toContain(`${field}:`);
  }
}

function patched(at: number, write: (v: DataView) => void, bytes = small): Uint8Array {
  const copy = bytes.slice();
  write(new DataView(copy.buffer, at));
  return copy;
}

describe('validateGrids names the first bad field', () => {
  it('accepts what the builder writes and reports its metadata', () => {
    const [g] = unwrap(validateGrids(small));
    expect(g).toMatchObject({ gridType: GridType.OnIndex, voxelCount: 3, valueCount: 4, nodeCount: [3, 2, 2], name: 'g' });
  });

  it.each([
    ['magic', patched(0, (v) => v.setUint8(0, 0x41))],
    ['version', patched(16, (v) => v.setUint32(0, 31 << 21, true))],
    ['gridSize', patched(32, (v) => v.setBigUint64(0, 1n << 40n, true))],
    ['gridSize', small.subarray(0, 700)],
    ['gridSize', small.subarray(0, small.length - 32)],
    ['gridCount', patched(28, (v) => v.setUint32(0, 0, true))],
    ['gridIndex', patched(24, (v) => v.setUint32(0, 1, true))],
    ['gridName', patched(40, (v) => { for (let i = 0; i < 256; i++) v.setUint8(i, 65); })],
    ['blindMetadataOffset', patched(648, (v) => v.setUint32(0, 3, true))],
    ['tree.nodeOffset[3]', patched(672 + 24, (v) => v.setBigInt64(0, 32n, true))],
    ['tree.nodeOffset[0]', patched(672, (v) => v.setBigInt64(0, 1n << 30n, true))],
    ['root.tableSize', patched(736 + 24, (v) => v.setUint32(0, 1 << 20, true))],
    ['root.tile[0].child', patched(736 + 96 + 8, (v) => v.setBigInt64(0, 8n, true))],
    ['root.tile[1].child', patched(672 + 40, (v) => v.setUint32(0, 1, true))],
    ['tree.tileCount', patched(672 + 44, (v) => v.setUint32(0, 1, true))],
    ['tree.voxelCount', patched(672 + 56, (v) => v.setBigUint64(0, 4n, true), gridBytes(GridType.OnIndex, [1, 1, 1]))],
    ['checksum.head', patched(8, (v) => v.setUint32(0, 0x1234, true))],
  ])('%s', (field, bytes) => expectField(bytes, field));

  it('catches a flipped voxel through the tail checksum', () => {
    const copy = small.slice();
    copy[copy.length - 96 + 15] = (copy[copy.length - 96 + 15] as number) ^ 1; // last leaf's flags: structure intact
    expectField(copy, 'checksum.tail');
  });

  it('a child offset that leaves the node array is caught before it is followed', () => {
    const [g] = unwrap(validateGrids(small));
    const upper = 672 + Number(new DataView(small.buffer, small.byteOffset).getBigInt64(672 + 16, true));
    expect(g).toBeDefined();
    // first set child of the first upper node: find its table entry and point it far away
    const v = new DataView(small.buffer, small.byteOffset);
    let entry = -1;
    for (let i = 0; i < 32768 && entry < 0; i++) if ((small[upper + 4128 + (i >> 3)]! & (1 << (i & 7))) !== 0) entry = i;
    expect(entry).toBeGreaterThanOrEqual(0);
    expectField(patched(upper + 8256 + 8 * entry, (w) => w.setBigInt64(0, -1000000n, true)), `upper[0].table[${entry}]`);
    void v;
  });

  it('reports grid types without a grid layout as NotSupported, and codes past the enum as InvalidArgument', () => {
    expectField(patched(636, (v) => v.setUint32(0, 24, true)), 'gridType', ErrorCode.NotSupported); // Vec3u8: blind data only
    expectField(patched(636, (v) => v.setUint32(0, 21, true)), 'gridType', ErrorCode.NotSupported); // retired
    expectField(patched(636, (v) => v.setUint32(0, 27, true)), 'gridType');
  });

  it('checks the grid class as NanoVDB does: its range and its fit with the grid type', () => {
    expectField(patched(632, (v) => v.setUint32(0, 11, true)), 'gridClass');
    expectField(patched(636, (v) => v.setUint32(0, 2, true)), 'gridClass'); // a Double grid of class IndexGrid
    const [g] = unwrap(validateGrids(patched(632, (v) => v.setUint32(0, 10, true)), { checksum: false })); // VoxelBVH: any type
    expect(g?.gridClass).toBe(10);
  });

  it('accepts the older "NanoVDB0" grid magic, as NanoVDB does', () => {
    const [g] = unwrap(validateGrids(patched(0, (v) => v.setUint8(7, 0x30))));
    expect(g?.gridType).toBe(GridType.OnIndex);
  });

  it('rejects leaves out of breadth-first order and, without the flag, two entries aliasing one node', () => {
    const two = gridBytes(GridType.OnIndex, [0, 0, 0, 8, 0, 0]); // one lower node, two leaves
    const v = new DataView(two.buffer);
    const lower = 672 + Number(v.getBigInt64(672 + 8, true));
    const entries: number[] = [];
    for (let i = 0; i < 4096 && entries.length < 2; i++) if ((two[lower + 544 + (i >> 3)]! & (1 << (i & 7))) !== 0) entries.push(i);
    const [a, b] = entries as [number, number];
    const at = (e: number): number => lower + 1088 + 8 * e;
    const swapped = two.slice();
    const w = new DataView(swapped.buffer);
    w.setBigInt64(at(a), v.getBigInt64(at(b), true), true); // child offsets are relative to the node
    w.setBigInt64(at(b), v.getBigInt64(at(a), true), true);
    expectField(swapped, `lower[0].table[${a}]`);
    expect(validateGrids(swapped, { checksum: false }).ok ? '' : 'not stored in that order').toContain('not stored in that order');
    const aliased = two.slice();
    const x = new DataView(aliased.buffer);
    x.setBigInt64(at(b), v.getBigInt64(at(a), true), true); // b points at a's leaf
    x.setUint32(20, x.getUint32(20, true) & ~32, true); // not breadth-first
    const r = validateGrids(aliased, { checksum: false });
    expect(r.ok ? '' : r.error.message).toContain(`lower[0].table[${b}]: child offset points at node 0, which another entry already points at (aliasing)`);
  });

  it('validates a chain of two grids and rejects a broken link', () => {
    const a = gridBytes(GridType.Float, [0, 0, 0]);
    const b = gridBytes(GridType.OnIndex, [5, 5, 5]);
    const chain = new Uint8Array(a.length + b.length);
    chain.set(a);
    chain.set(b, a.length);
    const dv = new DataView(chain.buffer);
    dv.setUint32(28, 2, true);
    dv.setUint32(a.length + 24, 1, true);
    dv.setUint32(a.length + 28, 2, true);
    // the edits changed headers, so drop the checksums
    dv.setBigUint64(8, 0xffffffffffffffffn, true);
    dv.setBigUint64(a.length + 8, 0xffffffffffffffffn, true);
    const grids = unwrap(validateGrids(chain));
    expect(grids.map((g) => [g.byteOffset, g.gridType])).toEqual([[0, GridType.Float], [a.length, GridType.OnIndex]]);
    dv.setUint32(a.length + 24, 0, true);
    expectField(chain, 'gridIndex');
  });

  it('fuzz: any value in any header field gives a result or a typed error, never a throw', () => {
    const fields = [8, 12, 16, 20, 24, 28, 32, 36, 632, 636, 640, 644, 648, 656, 672, 680, 688, 696, 704, 708, 712, 716, 720, 724, 728, 736, 748, 760, 832, 840, 848];
    fc.assert(
      fc.property(fc.constantFrom(...fields), fc.integer({ min: 0, max: 0xffffffff }), fc.boolean(), (at, value, high) => {
        const bytes = patched(at, (v) => v.setUint32(high ? 4 : 0, value, true));
        const r = validateGrids(bytes, { checksum: false });
        if (!r.ok) expect([ErrorCode.InvalidArgument, ErrorCode.NotSupported]).toContain(r.error.code);
      }),
      { numRuns: 2000 },
    );
  });

  it('fuzz: truncation and random byte damage anywhere never throws', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: small.length }), fc.array(fc.tuple(fc.nat(small.length - 1), fc.nat(255)), { maxLength: 8 }), (cut, damage) => {
        const copy = small.slice(0, cut);
        for (const [at, value] of damage) if (at < copy.length) copy[at] = value;
        const r = validateGrids(copy, { checksum: false });
        if (!r.ok) expect([ErrorCode.InvalidArgument, ErrorCode.NotSupported]).toContain(r.error.code);
      }),
      { numRuns: 500 },
    );
  });
});

describe('.nvdb files', () => {
  const grid = gridBytes(GridType.Float, [0, 0, 0, 50, -60, 70, 1000, 2000, 3000], 'density');
  const [meta] = unwrap(validateGrids(grid));

  it.each(['none', 'zip'] as const)('round-trips codec %s through readNvdb/writeNvdb', (codec) => {
    const handle = unwrap(readNvdb(backend, resource, unwrap(encodeNvdb(grid, [meta!], codec))))[0]!;
    expect(sameBytes(unwrap(handle.hostBytes()), grid)).toBe(true);
    expect(handle.grid()?.name).toBe('density');
    const again = unwrap(writeNvdb(handle, codec));
    expect(sameBytes(unwrap(decodeNvdb(again))[0]!.bytes, grid)).toBe(true);
    handle.dispose();
  });

  it('writes the documented header and metadata', () => {
    const file = unwrap(encodeNvdb(grid, [meta!], 'none'));
    const v = new DataView(file.buffer);
    expect(new TextDecoder().decode(file.subarray(0, 8))).toBe('NanoVDB2');
    expect([v.getUint16(12, true), v.getUint16(14, true)]).toEqual([1, 0]);
    expect(v.getBigUint64(16, true)).toBe(BigInt(grid.length));
    expect(v.getBigUint64(16 + 8, true)).toBe(BigInt(grid.length));
    expect(v.getUint32(16 + 136, true)).toBe(8); // "density" + NUL
    expect([0, 1, 2, 3].map((i) => v.getUint32(16 + 140 + 4 * i, true))).toEqual([3, 3, 2, 1]);
    expect(file.length).toBe(16 + 176 + 8 + grid.length);
  });

  it.each(['none', 'zip'] as const)('encodes codec %s into a given buffer when it fits (the same bytes, no new array), else into a new one', (codec) => {
    const fresh = unwrap(encodeNvdb(grid, [meta!], codec));
    // a dirty, offset buffer: every byte of the file must be written, the NUL after the name included
    const backing = new Uint8Array(fresh.length + 64).fill(0xee);
    const into = backing.subarray(32);
    const reused = unwrap(encodeNvdb(grid, [meta!], codec, into));
    expect(reused.buffer).toBe(backing.buffer);
    expect(reused.byteOffset).toBe(32);
    expect(sameBytes(reused, fresh)).toBe(true);
    expect(backing[32 + fresh.length]).toBe(0xee);
    const small = new Uint8Array(fresh.length - 1);
    const grown = unwrap(encodeNvdb(grid, [meta!], codec, small));
    expect(grown.buffer).not.toBe(small.buffer);
    expect(sameBytes(grown, fresh)).toBe(true);
  });

  it('refuses an output buffer that is not bytes or overlaps the grid, with InvalidArgument', () => {
    const notBytes = encodeNvdb(grid, [meta!], 'none', new Uint16Array(4096) as unknown as Uint8Array);
    expect(!notBytes.ok && notBytes.error.code).toBe(ErrorCode.InvalidArgument);
    const both = new Uint8Array(grid.length * 3);
    both.set(grid);
    const overlapping = encodeNvdb(both.subarray(0, grid.length), [meta!], 'none', both.subarray(grid.length - 8));
    expect(!overlapping.ok && overlapping.error.message).toMatch(/shares memory with the grid bytes/);
    const beside = unwrap(encodeNvdb(both.subarray(0, grid.length), [meta!], 'none', both.subarray(grid.length)));
    expect(sameBytes(beside, unwrap(encodeNvdb(grid, [meta!], 'none')))).toBe(true);
  });

  it('reads raw grid buffers back to back', () => {
    const raw = new Uint8Array(grid.length * 2);
    raw.set(grid);
    raw.set(grid, grid.length);
    expect(unwrap(decodeNvdb(raw)).length).toBe(2);
  });

  it('blosc is NotSupported', () => {
    expect(encodeNvdb(grid, [meta!], 'blosc').ok).toBe(false);
    const file = unwrap(encodeNvdb(grid, [meta!], 'none'));
    new DataView(file.buffer).setUint16(14, 2, true); // header and grid codec: blosc
    new DataView(file.buffer).setUint16(16 + 168, 2, true);
    const r = decodeNvdb(file);
    expect(!r.ok && r.error.code).toBe(ErrorCode.NotSupported);
  });

  it('fuzz: every header and metadata field of zip and raw files gives typed errors, never a throw', () => {
    const files = [unwrap(encodeNvdb(grid, [meta!], 'none')), unwrap(encodeNvdb(grid, [meta!], 'zip'))];
    const fields = [0, 8, 12, 14, ...Array.from({ length: 44 }, (_, i) => 16 + 4 * i), 16 + 176, 16 + 176 + 4, 16 + 176 + 8];
    fc.assert(
      fc.property(fc.constantFrom(0, 1), fc.constantFrom(...fields), fc.integer({ min: 0, max: 0xffffffff }), fc.nat(), (which, at, value, cut) => {
        const file = files[which]!.slice();
        new DataView(file.buffer).setUint32(at, value, true);
        const truncated = cut % 3 === 0 ? file.subarray(0, cut % file.length) : file;
        const r = decodeNvdb(truncated);
        if (!r.ok) expect([ErrorCode.InvalidArgument, ErrorCode.NotSupported]).toContain(r.error.code);
      }),
      { numRuns: 1500 },
    );
  });
});

describe('bad arguments and truncated grids give typed errors', () => {
  const notBytes: readonly unknown[] = ['not bytes', null, undefined, 42, {}, [1, 2, 3], new ArrayBuffer(800)];

  it.each(notBytes.map((v) => [v]))('validateGrids, decodeNvdb and readNvdb return InvalidArgument for %o', (value) => {
    for (const [who, r] of [
      ['validateGrids', validateGrids(value as Uint8Array)],
      ['decodeNvdb', decodeNvdb(value as Uint8Array)],
      ['readNvdb', readNvdb(backend, resource, value as Uint8Array)],
    ] as const) {
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.error.code).toBe(ErrorCode.InvalidArgument);
        expect(r.error.message).toContain(`${who}: expected the bytes as a Uint8Array`);
      }
    }
  });

  it.each([[null], ['bytes'], [undefined]])('GridHandle.fromHostBytes returns InvalidArgument for storage %o', (storage) => {
    const r = GridHandle.fromHostBytes(backend, storage as never);
    expect(!r.ok && r.error.code).toBe(ErrorCode.InvalidArgument);
    expect(!r.ok && r.error.message).toContain('expected the grid storage as a ResourceBuffer or BufferView');
  });

  it('the readers over bytes and a grid of them refuse bytes that do not hold that grid, instead of a RangeError', () => {
    const handle = unwrap(pointsToGrid(backend, resource, { space: 'index', coords: new Int32Array([1, 2, 3]) }, { gridType: GridType.Float }));
    const metadata = handle.grid()!;
    const short = new Uint8Array(10);
    const readers: [string, () => unknown][] = [
      ['new GridAccessor', () => new GridAccessor(short, metadata)],
      ['gridStatistics', () => gridStatistics(short, metadata)],
      ['gridBlindMetadata', () => gridBlindMetadata(short, metadata)],
      ['readBlindData', () => readBlindData(short, metadata, {} as never, new Uint8Array(1))],
    ];
    for (const [who, read] of readers) {
      expect(read).toThrow(new HsError(ErrorCode.InvalidArgument, `${who}: the bytes hold 10 bytes, fewer than the ${metadata.gridSize} of grid 0 at byte 0; pass the bytes its metadata was validated from`));
    }
    expect(() => new GridAccessor(null as never, null as never)).toThrow('new GridAccessor takes the bytes and one grid of them: new GridAccessor(unwrap(handle.hostBytes()), handle.grid())');
    expect(() => gridBlindMetadata(unwrap(handle.hostBytes()), undefined as never)).toThrow('gridBlindMetadata takes the bytes and one grid of them');
    handle.dispose();
  });

  it('computeChecksum refuses a gridSize its bytes do not hold and an unknown mode, instead of a checksum of less', () => {
    const grid = gridBytes(GridType.Float, [1, 2, 3]);
    const gridSizeProblem = (size: number, bytes: number): string => `computeChecksum: gridSize ${size} must be an integer from 736 (the grid and tree headers) to the ${bytes} bytes given`;
    expect(() => computeChecksum(grid.subarray(0, 100), 100, 'full')).toThrow(new HsError(ErrorCode.InvalidArgument, gridSizeProblem(100, 100)));
    expect(() => computeChecksum(grid.subarray(0, 1000), 5000, 'partial')).toThrow(gridSizeProblem(5000, 1000));
    expect(() => computeChecksum(grid, 1.5, 'full')).toThrow(gridSizeProblem(1.5, grid.length));
    expect(() => computeChecksum(grid, grid.length, 'bogus' as never)).toThrow("computeChecksum: mode must be 'full', 'partial' or 'disabled', got bogus");
    expect(() => computeChecksum(null as never, 736, 'full')).toThrow('computeChecksum: grid must be the Uint8Array of the grid bytes');
    expect(computeChecksum(grid, grid.length, 'full')).toEqual(unwrap(validateGrids(grid))[0]!.checksum);
  });

  it.each([736, 5000])('a grid cut to %i bytes is reported as truncated with both sizes', (length) => {
    const big = gridBytes(GridType.Float, Array.from({ length: 300 }, (_, i) => [i * 9, i * 3, -i * 5]).flat());
    expect(big.length).toBeGreaterThan(5000);
    for (const r of [validateGrids(big.subarray(0, length)), decodeNvdb(big.slice(0, length))]) {
      expect(!r.ok && r.error.message).toContain(`the buffer is truncated: the grid is ${big.length} bytes, only ${length} are available`);
    }
  });
});
