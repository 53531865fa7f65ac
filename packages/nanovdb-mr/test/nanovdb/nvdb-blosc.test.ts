// BLOSC .nvdb files: NanoVDB's own (written with Debian's c-blosc by make-nanovdb-fixtures.sh) read value for value,
// and files hs writes read back byte for byte.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ErrorCode, HostBackend, HsError, unwrap } from '@hs/streams';
import { GridAccessor, GridType, HostResource, decodeNvdb, decodeNvdbAsync, readNvdbAsync, readNvdbMetadata, voxelsToGrid, writeNvdbAsync } from '../../src/index.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/nanovdb');
const load = (name: string): Uint8Array => new Uint8Array(readFileSync(join(FIXTURES, name)));

describe.each(['float', 'fp16', 'vec3d'])('NanoVDB-written BLOSC %s grid', (name) => {
  it('decodes to the same grid as NanoVDB\'s zip file of it, and reads NanoVDB\'s sampled values', async () => {
    const blosc = load(`${name}-blosc.nvdb`);
    expect(unwrap(readNvdbMetadata(blosc))[0]!.codec).toBe('blosc');
    const sync = decodeNvdb(blosc);
    expect(sync.ok ? '' : sync.error.code).toBe(ErrorCode.NotSupported);
    const [segment] = await decodeNvdbAsync(blosc);
    const [zip] = unwrap(decodeNvdb(load(`${name}.nvdb`)));
    expect(Buffer.from(segment!.bytes).equals(Buffer.from(zip!.bytes))).toBe(true);
    const expected = JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8')) as { samples: [number, number, number, boolean, number | number[]][] };
    const acc = new GridAccessor(segment!.bytes, segment!.grids[0]!);
    const out = new Float64Array(3);
    for (const [x, y, z, , value] of expected.samples) {
      const got = Array.isArray(value) ? [...acc.getVector(x, y, z, out)] : acc.getValue(x, y, z);
      expect(got).toEqual(Array.isArray(value) ? value : Math.fround(value));
    }
  });

  it('a truncated BLOSC file rejects with a typed error naming the field', async () => {
    const blosc = load(`${name}-blosc.nvdb`);
    await expect(decodeNvdbAsync(blosc.subarray(0, blosc.length - 100))).rejects.toMatchObject({ code: ErrorCode.InvalidArgument, message: expect.stringMatching(/payload\[0\]/) });
    const damaged = blosc.slice();
    const payload = 16 + 176 + new TextEncoder().encode(unwrap(readNvdbMetadata(blosc))[0]!.name).length + 1;
    new DataView(damaged.buffer).setBigUint64(payload, 1n << 40n, true); // the first chunk's size
    await expect(decodeNvdbAsync(damaged)).rejects.toMatchObject({ code: ErrorCode.InvalidArgument, message: expect.stringContaining('payload[0].chunkSize:') });
    damaged.set(blosc.subarray(payload, payload + 8), payload);
    damaged.fill(0, payload + 8, payload + 24); // the BLOSC frame header
    await expect(decodeNvdbAsync(damaged)).rejects.toBeInstanceOf(HsError);
  });
});

describe('writeNvdbAsync with BLOSC', () => {
  it('writes several handles that read back byte for byte, listed as BLOSC', async () => {
    const backend = new HostBackend();
    const resource = new HostResource(backend);
    const handles = [GridType.Float, GridType.Vec3f].map((gridType, i) =>
      unwrap(voxelsToGrid(backend, resource, { coords: new Int32Array([i, 2, 3, 40, 50, 60]), values: new Float32Array(gridType === GridType.Vec3f ? 6 : 2).fill(0.5) }, { gridType: gridType as GridType.Float, name: `g${i}` })),
    );
    const file = await writeNvdbAsync(handles, 'blosc');
    expect(unwrap(readNvdbMetadata(file)).map((g) => [g.name, g.codec])).toEqual([['g0', 'blosc'], ['g1', 'blosc']]);
    const back = await readNvdbAsync(backend, resource, file);
    expect(back.map((h, i) => Buffer.from(unwrap(h.hostBytes())).equals(Buffer.from(unwrap(handles[i]!.hostBytes()))))).toEqual([true, true]);
    expect((await writeNvdbAsync(handles[0]!, 'zip')).length).toBeGreaterThan(0);
  });
});
