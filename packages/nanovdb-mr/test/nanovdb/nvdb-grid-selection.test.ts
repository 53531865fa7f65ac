// .nvdb IO beyond whole-file decode: metadata without inflating, one grid by position or name, several handles per file.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ErrorCode, HostBackend, unwrap } from '@hs/streams';
import { GridType, HostResource, computeChecksum, decodeNvdb, decodeNvdbGrid, encodeNvdb, readNvdb, readNvdbGrid, readNvdbMetadata, validateGrids, voxelsToGrid, writeNvdb } from '../../src/index.js';
import { writeChecksum } from '../../src/nanovdb/grid/grid-checksum.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/nanovdb');
const backend = new HostBackend();
const resource = new HostResource(backend);
const same = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a.buffer, a.byteOffset, a.length).equals(Buffer.from(b.buffer, b.byteOffset, b.length));

function grid(gridType: GridType.Float | GridType.Int32, name: string, at: number): ReturnType<typeof voxelsToGrid> {
  return voxelsToGrid(backend, resource, { coords: new Int32Array([at, 0, 0, at + 9, 1, 2]), values: new Float32Array([1, 2]) }, { gridType, name });
}

/** Two grids as one chain (grid 1 of 2 needs renumbering to stand alone), checksums recomputed. */
function chainOfTwo(): Uint8Array {
  const a = unwrap(unwrap(grid(GridType.Float, 'first', 0)).hostBytes());
  const b = unwrap(unwrap(grid(GridType.Int32, 'second', 100)).hostBytes());
  const chain = new Uint8Array(a.length + b.length);
  chain.set(a);
  chain.set(b, a.length);
  const v = new DataView(chain.buffer);
  v.setUint32(28, 2, true);
  v.setUint32(a.length + 24, 1, true);
  v.setUint32(a.length + 28, 2, true);
  writeChecksum(chain, computeChecksum(chain, a.length, 'full'));
  const second = chain.subarray(a.length);
  writeChecksum(second, computeChecksum(second, b.length, 'full'));
  return chain;
}

describe('readNvdbMetadata lists grids from the headers alone', () => {
  it.each(['float', 'vec3d', 'fp4', 'fpn', 'mask', 'onindex'])('%s: what NanoVDB wrote in its FileMetaData matches the grid', (name) => {
    const file = new Uint8Array(readFileSync(join(FIXTURES, `${name}.nvdb`)));
    const expected = JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8')) as { gridType: number; gridClass: number; name: string; voxelCount: number };
    const [info] = unwrap(readNvdbMetadata(file));
    const [g] = unwrap(decodeNvdb(file))[0]!.grids;
    expect(info).toMatchObject({ segment: 0, index: 0, codec: 'zip', gridType: expected.gridType, gridClass: expected.gridClass, name: expected.name, voxelCount: expected.voxelCount });
    expect(info).toMatchObject({ gridSize: g!.gridSize, nodeCount: g!.nodeCount, tileCount: g!.tileCount, indexBBox: g!.indexBBox, worldBBox: g!.worldBBox, voxelSize: g!.voxelSize });
  });

  it('does not inflate: a corrupt payload is listed, and only decoding it fails', () => {
    const file = new Uint8Array(readFileSync(join(FIXTURES, 'float.nvdb')));
    file[file.length - 20] = (file[file.length - 20] as number) ^ 0xff;
    expect(unwrap(readNvdbMetadata(file))[0]!.name).toBe('float');
    expect(decodeNvdb(file).ok).toBe(false);
  });

  it('lists raw grid buffers from their headers, and names the field of a bad header', () => {
    const chain = chainOfTwo();
    expect(unwrap(readNvdbMetadata(chain)).map((g) => [g.index, g.name, g.gridType, g.codec])).toEqual([[0, 'first', GridType.Float, 'none'], [1, 'second', GridType.Int32, 'none']]);
    const file = unwrap(encodeNvdb(chain, unwrap(validateGrids(chain)), 'zip'));
    for (const [bytes, field] of [[file.subarray(0, 100), 'meta[0]'], [file.subarray(0, 10), 'header'], [chain.subarray(0, chain.length - 32), 'raw grid 1 at byte']] as const) {
      const r = readNvdbMetadata(bytes);
      expect(r.ok ? '' : `${r.error.code} ${r.error.message}`).toContain(field);
    }
    expect(readNvdbMetadata(new Uint8Array(0)).ok).toBe(false);
  });
});

describe('decodeNvdbGrid and readNvdbGrid read one grid', () => {
  const chain = chainOfTwo();
  const file = unwrap(encodeNvdb(chain, unwrap(validateGrids(chain)), 'zip'));

  it.each([
    ['by position', 1],
    ['by name', 'second'],
  ] as const)('%s, renumbered as the only grid of its buffer with its head checksum recomputed (as NanoVDB does)', (_how, which) => {
    for (const source of [file, chain]) {
      const one = unwrap(decodeNvdbGrid(source, which));
      expect(one.grids.map((g) => [g.name, g.gridIndex, g.gridCount])).toEqual([['second', 0, 1]]);
      expect(unwrap(validateGrids(one.bytes)).length).toBe(1); // checksums verified
      const handle = unwrap(readNvdbGrid(backend, resource, source, which));
      expect(same(unwrap(handle.hostBytes()), one.bytes)).toBe(true);
    }
  });

  it('NotFound names what the file holds; a bad position is InvalidArgument', () => {
    const r = decodeNvdbGrid(file, 'third');
    expect(r.ok ? '' : `${r.error.code} ${r.error.message}`).toBe(`${ErrorCode.NotFound} NotFound: decodeNvdbGrid: no grid named "third"; the file holds 2: "first", "second"`);
    expect(decodeNvdbGrid(file, 2).ok ? '' : 'NotFound').toBe('NotFound');
    const bad = decodeNvdbGrid(file, -1);
    expect(bad.ok ? '' : bad.error.code).toBe(ErrorCode.InvalidArgument);
  });

  it('refuses a grid its FileMetaData misdescribes, as decodeNvdb does, instead of returning another grid than the one asked for', () => {
    const lying = file.slice();
    const at = Buffer.from(lying).indexOf('second'); // meta[1]'s name; the payloads are deflated
    lying[at + 5] = 'e'.charCodeAt(0); // the metadata now lists "secone", the grid is still "second"
    expect(unwrap(readNvdbMetadata(lying)).map((g) => g.name)).toEqual(['first', 'secone']);
    const whole = decodeNvdb(lying);
    expect(whole.ok ? '' : whole.error.message).toBe('InvalidArgument: .nvdb segment 0 at byte 0: meta[1]: gridSize, gridType or name differs from the grid it describes');
    for (const which of ['secone', 1] as const) {
      const one = decodeNvdbGrid(lying, which);
      expect(one.ok ? `a grid named ${one.value.grids[0]!.name}` : one.error.message).toBe('InvalidArgument: .nvdb segment 0 at byte 0: meta[1]: gridSize, gridType or name differs from the grid it describes');
      const handle = readNvdbGrid(backend, resource, lying, which);
      expect(handle.ok ? 'a handle' : handle.error.code).toBe(ErrorCode.InvalidArgument);
    }
  });
});

describe('writeNvdb writes several handles into one file', () => {
  it('one segment per handle; readNvdb gives the same handles back and readNvdbMetadata lists them all', () => {
    const handles = ['a', 'b', 'c'].map((name, i) => unwrap(grid(GridType.Float, name, 1000 * i)));
    for (const codec of ['none', 'zip'] as const) {
      const file = unwrap(writeNvdb(handles, codec));
      expect(unwrap(readNvdbMetadata(file)).map((g) => [g.segment, g.index, g.name])).toEqual([[0, 0, 'a'], [1, 0, 'b'], [2, 0, 'c']]);
      const back = unwrap(readNvdb(backend, resource, file));
      expect(back.map((h, i) => same(unwrap(h.hostBytes()), unwrap(handles[i]!.hostBytes())))).toEqual([true, true, true]);
      expect(unwrap(decodeNvdbGrid(file, 'c')).grids[0]!.name).toBe('c');
    }
    expect(writeNvdb([]).ok).toBe(false);
  });
});

describe('long grid names (256 UTF-8 bytes or more)', () => {
  const name = `${'très-long-'.repeat(30)}end`; // 331 bytes
  it('are written as GridName blind data and read back in full, through .nvdb too', () => {
    const handle = unwrap(voxelsToGrid(backend, resource, { coords: new Int32Array([1, 2, 3]), values: new Float32Array([4]) }, { gridType: GridType.Float, name }));
    const g = handle.grid()!;
    expect([g.name, g.flags & 1, g.blindMetadataCount]).toEqual([name, 1, 1]);
    const bytes = unwrap(handle.hostBytes());
    expect(Buffer.from(bytes.subarray(40, 40 + 256)).indexOf(0)).toBe(255); // the short field holds the first 255 bytes
    const file = unwrap(writeNvdb(handle, 'zip'));
    expect(unwrap(readNvdbMetadata(file))[0]!.name).toBe(name);
    expect(unwrap(decodeNvdb(file))[0]!.grids[0]!.name).toBe(name);
    expect(unwrap(decodeNvdbGrid(file, name)).grids[0]!.name).toBe(name);
  });

  it('a long-name flag without its blind data is a typed error naming the field', () => {
    const handle = unwrap(voxelsToGrid(backend, resource, { coords: new Int32Array([1, 2, 3]) }, { gridType: GridType.Mask }));
    const bytes = unwrap(handle.hostBytes()).slice();
    new DataView(bytes.buffer).setUint32(20, new DataView(bytes.buffer).getUint32(20, true) | 1, true);
    const r = validateGrids(bytes, { checksum: false });
    expect(r.ok ? '' : r.error.message).toContain('flags: HasLongGridName is set, but no blind data of class GridName');
  });
});

describe('grids larger than one host buffer', () => {
  it('are listed by readNvdbMetadata and refused by the decoders with NotSupported naming the 2^32 - 1 limit', () => {
    const handle = unwrap(grid(GridType.Float, 'big', 0));
    const small = unwrap(writeNvdb(handle, 'zip'));
    // meta[0].gridSize: 4 GiB, with a payload (meta[0].fileSize) of the 4 MiB and more a zip stream needs to inflate to it
    const payloadStart = 16 + 176 + new DataView(small.buffer, small.byteOffset).getUint32(16 + 136, true);
    const payloadBytes = Math.ceil(2 ** 32 / 1032);
    const file = new Uint8Array(payloadStart + payloadBytes);
    file.set(small.subarray(0, payloadStart));
    new DataView(file.buffer).setBigUint64(16, 2n ** 32n, true);
    new DataView(file.buffer).setBigUint64(24, BigInt(payloadBytes), true);
    expect(unwrap(readNvdbMetadata(file))[0]!.gridSize).toBe(2 ** 32);
    for (const r of [decodeNvdb(file), decodeNvdbGrid(file, 0)]) {
      expect(r.ok ? '' : `${r.error.code} ${r.error.message}`).toMatch(/^NotSupported .*exceed 2\^32 - 1 \(4294967295\), the most one host buffer holds on Node 20/);
    }
  });
});
