// .nvdb files from and to paths, a chunk at a time.
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCode, HostBackend, HsError, unwrap } from '@hs/streams';
import { GridType, HostResource, StatisticsResource, decodeNvdb, encodeNvdb, readNvdbFile, validateGrids, voxelsToGrid, writeNvdb, writeNvdbAsync, writeNvdbFile } from '../../src/index.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/nanovdb');
const backend = new HostBackend();
const resource = new HostResource(backend);
const dir = mkdtempSync(join(tmpdir(), 'hs-nvdb-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const same = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a).equals(Buffer.from(b));

describe('readNvdbFile', () => {
  it.each(['float.nvdb', 'vec3d.nvdb', 'fpn.nvdb', 'float-blosc.nvdb'])('%s in 4 KiB chunks gives the grids decodeNvdb gives', async (name) => {
    const [handle] = await readNvdbFile(backend, resource, join(FIXTURES, name), { chunkBytes: 4096 });
    const zip = name.replace('-blosc', '');
    const [segment] = unwrap(decodeNvdb(new Uint8Array(readFileSync(join(FIXTURES, zip)))));
    expect(same(unwrap(handle!.hostBytes()), segment!.bytes)).toBe(true);
  });

  it('reads uncompressed files and raw grid chains the same way', async () => {
    const [segment] = unwrap(decodeNvdb(new Uint8Array(readFileSync(join(FIXTURES, 'int32.nvdb')))));
    const plain = join(dir, 'plain.nvdb');
    writeFileSync(plain, unwrap(encodeNvdb(segment!.bytes, segment!.grids, 'none')));
    const raw = join(dir, 'raw.nvdb');
    writeFileSync(raw, segment!.bytes);
    for (const path of [plain, raw]) {
      const [handle] = await readNvdbFile(backend, resource, path, { chunkBytes: 1000 });
      expect(same(unwrap(handle!.hostBytes()), segment!.bytes)).toBe(true);
    }
  });

  it('a truncated or corrupt file rejects with a typed error naming the field', async () => {
    const file = new Uint8Array(readFileSync(join(FIXTURES, 'float.nvdb')));
    const cut = join(dir, 'cut.nvdb');
    writeFileSync(cut, file.subarray(0, file.length - 40));
    await expect(readNvdbFile(backend, resource, cut)).rejects.toMatchObject({ code: ErrorCode.InvalidArgument, message: expect.stringContaining('payload[0]') });
    const bad = file.slice();
    bad[bad.length - 30] = (bad[bad.length - 30] as number) ^ 0xff;
    const corrupt = join(dir, 'corrupt.nvdb');
    writeFileSync(corrupt, bad);
    await expect(readNvdbFile(backend, resource, corrupt)).rejects.toMatchObject({ code: ErrorCode.InvalidArgument });
    await expect(readNvdbFile(backend, resource, cut, { chunkBytes: 0 })).rejects.toMatchObject({ message: expect.stringContaining('chunkBytes') });
  });

  it('refuses a zip FileMetaData whose gridSize its payload cannot inflate to, before allocating that gridSize', async () => {
    const handle = unwrap(voxelsToGrid(backend, resource, { coords: new Int32Array([0, 0, 0]), values: new Float32Array([1]) }, { gridType: GridType.Float }));
    const file = unwrap(writeNvdb(handle, 'zip')).slice();
    handle.dispose();
    const fileSize = Number(new DataView(file.buffer).getBigUint64(24, true));
    new DataView(file.buffer).setBigUint64(16, 3n * 2n ** 30n, true); // a few hundred bytes claiming a 3 GiB grid
    const path = join(dir, 'claims-3-gib.nvdb');
    writeFileSync(path, file);
    const counted = new StatisticsResource(resource);
    const message = `InvalidArgument: .nvdb segment 0 at byte 0: meta[0].gridSize: 3221225472 bytes cannot inflate from a ${fileSize}-byte zip payload (zlib inflates at most 1032 bytes per byte)`;
    await expect(readNvdbFile(backend, counted, path)).rejects.toThrow(message);
    expect(counted.statistics.bytes.peak).toBe(0);
    const decoded = decodeNvdb(file);
    expect(decoded.ok ? '' : decoded.error.message).toBe(message);
  });

  it('refuses a BLOSC FileMetaData whose gridSize its chunks do not hold, before allocating that gridSize', async () => {
    const file = new Uint8Array(readFileSync(join(FIXTURES, 'float-blosc.nvdb')));
    const v = new DataView(file.buffer);
    const real = Number(v.getBigUint64(16, true));
    for (const [claimed, first] of [
      [3 * 2 ** 30, 2 ** 30], // 11 KB claiming 3 GiB: its one chunk holds the real grid, not the first GiB
      [real + 4096, real + 4096], // a little more than the chunk holds
    ] as const) {
      v.setBigUint64(16, BigInt(claimed), true);
      const path = join(dir, `blosc-claims-${claimed}.nvdb`);
      writeFileSync(path, file);
      const counted = new StatisticsResource(resource);
      await expect(readNvdbFile(backend, counted, path)).rejects.toThrow(`InvalidArgument: .nvdb segment 0: payload[0]: a BLOSC chunk holds ${real} bytes, not the ${first} that meta[0].gridSize ${claimed} needs there`);
      expect(counted.statistics.bytes.peak).toBe(0);
    }
  });

  it('refuses options that are not an object or hold a misspelt field, instead of a TypeError or a silent default', async () => {
    const path = join(FIXTURES, 'float.nvdb');
    await expect(readNvdbFile(backend, resource, path, null as never)).rejects.toThrow(new HsError(ErrorCode.InvalidArgument, 'readNvdbFile: options must be an object, not null'));
    await expect(readNvdbFile(backend, resource, path, { chunkByte: 512 } as never)).rejects.toThrow("readNvdbFile: unknown option 'chunkByte'; did you mean 'chunkBytes'?");
  });
});

describe('writeNvdbFile', () => {
  it('writes one segment per handle that readNvdbFile reads back byte for byte, in every codec', async () => {
    const handles = [GridType.Float, GridType.Int32].map((gridType, i) =>
      unwrap(voxelsToGrid(backend, resource, { coords: new Int32Array([i, 0, 0, 90, 80, 70]), values: new Float32Array([1, 2]) }, { gridType: gridType as GridType.Float, name: `h${i}` })),
    );
    for (const codec of ['none', 'zip', 'blosc'] as const) {
      const path = join(dir, `${codec}.nvdb`);
      await writeNvdbFile(path, handles, codec);
      const back = await readNvdbFile(backend, resource, path, { chunkBytes: 512 });
      expect(back.map((h, i) => same(unwrap(h.hostBytes()), unwrap(handles[i]!.hostBytes())))).toEqual([true, true]);
      expect(unwrap(validateGrids(unwrap(back[1]!.hostBytes())))[0]!.name).toBe('h1');
    }
  });

  it('refuses what is not a GridHandle and an unknown codec with InvalidArgument, leaving no file or staging file', async () => {
    const handle = unwrap(voxelsToGrid(backend, resource, { coords: new Int32Array([0, 0, 0]), values: new Float32Array([1]) }, { gridType: GridType.Float }));
    const out = join(dir, 'refused');
    mkdirSync(out);
    await expect(writeNvdbFile(join(out, 'null.nvdb'), null as never)).rejects.toThrow(new HsError(ErrorCode.InvalidArgument, 'writeNvdbFile: handle 0 is not a GridHandle (got null)'));
    await expect(writeNvdbFile(join(out, 'second.nvdb'), [handle, {} as never])).rejects.toThrow('writeNvdbFile: handle 1 is not a GridHandle (got an object)');
    await expect(writeNvdbFile(join(out, 'lz4.nvdb'), handle, 'lz4' as never)).rejects.toThrow(new HsError(ErrorCode.InvalidArgument, "writeNvdbFile: codec must be 'none', 'zip' or 'blosc', got lz4"));
    await expect(writeNvdbAsync(handle, 'lz4' as never)).rejects.toThrow("writeNvdbAsync: codec must be 'none', 'zip' or 'blosc', got lz4");
    expect(readdirSync(out)).toEqual([]);
    const sync = writeNvdb(undefined as never);
    expect(sync.ok ? '' : sync.error.message).toBe('InvalidArgument: writeNvdb: handle 0 is not a GridHandle (got undefined)');
    handle.dispose();
  });
});

describe('nvdb files in a shared folder', () => {
  it('writeNvdbFile replaces a symlink planted at the path (its target untouched) and leaves no staging file on failure', async () => {
    const handle = unwrap(voxelsToGrid(backend, resource, { coords: new Int32Array([0, 0, 0]), values: new Float32Array([1]) }, { gridType: GridType.Float, name: 's' }));
    const out = join(dir, 'shared');
    mkdirSync(out);
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'precious');
    symlinkSync(victim, join(out, 'scene.nvdb'));
    await writeNvdbFile(join(out, 'scene.nvdb'), handle);
    expect(readFileSync(victim, 'utf8')).toBe('precious');
    expect(lstatSync(join(out, 'scene.nvdb')).isFile()).toBe(true);
    mkdirSync(join(out, 'taken.nvdb'));
    await expect(writeNvdbFile(join(out, 'taken.nvdb'), handle)).rejects.toMatchObject({ code: ErrorCode.InvalidArgument, message: expect.stringContaining('EISDIR') });
    expect(readdirSync(out).sort()).toEqual(['scene.nvdb', 'taken.nvdb']);
  });

  it.skipIf(process.platform === 'win32')('readNvdbFile refuses a FIFO at once with InvalidArgument', async () => {
    const fifo = join(dir, 'planted.nvdb');
    execFileSync('mkfifo', [fifo]);
    const started = performance.now();
    await expect(readNvdbFile(backend, resource, fifo)).rejects.toMatchObject({ code: ErrorCode.InvalidArgument, message: expect.stringContaining('FIFO') });
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
