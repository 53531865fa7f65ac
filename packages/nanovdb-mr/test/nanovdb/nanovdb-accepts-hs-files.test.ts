// Files hs writes, checked by NanoVDB's own reader and CheckMode::Full validator. The validator is built outside the
// repository by test/fixtures/nanovdb/make-nanovdb-fixtures.sh; point HS_NANOVDB_VALIDATE at it to run this test.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { HostBackend, unwrap } from '@hs/streams';
import { GridClass, GridType, HostResource, decodeNvdbAsync, encodeNvdb, pointsToGrid, voxelsToGrid, writeNvdb, writeNvdbAsync, type ValueGridType } from '../../src/index.js';

const validator = process.env.HS_NANOVDB_VALIDATE ?? '';
const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/nanovdb');
// NanoVDB's validator cannot check these: it has no Half build type, and steps through FpN leaves by a fixed size.
const NANOVDB_CANNOT = new Set(['half.nvdb', 'fpn.nvdb']);

describe.skipIf(!existsSync(validator))(`NanoVDB accepts files hs writes (needs HS_NANOVDB_VALIDATE, see make-nanovdb-fixtures.sh)`, () => {
  it('every re-encoded fixture and every built grid is valid at CheckMode::Full', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hs-nvdb-'));
    try {
      const files: string[] = [];
      for (const name of readdirSync(FIXTURES).filter((n) => n.endsWith('.nvdb') && !NANOVDB_CANNOT.has(n))) {
        const [segment] = await decodeNvdbAsync(new Uint8Array(readFileSync(join(FIXTURES, name))));
        for (const codec of ['none', 'zip'] as const) {
          files.push(join(dir, `${codec}-${name}`));
          writeFileSync(files.at(-1)!, unwrap(encodeNvdb(segment!.bytes, segment!.grids, codec)));
        }
      }
      const backend = new HostBackend();
      const coords = new Int32Array([0, 0, 0, 9, 9, 9, -20, 3, 4000, 5000, -7000, 1]);
      const built = [GridType.Float, GridType.OnIndex].map((gridType) => unwrap(pointsToGrid(backend, new HostResource(backend), { space: 'index', coords }, { gridType: gridType as GridType.Float, name: GridType[gridType] })));
      for (const handle of built) {
        files.push(join(dir, `built-${handle.grid()!.name}.nvdb`));
        writeFileSync(files.at(-1)!, unwrap(writeNvdb(handle, 'zip')));
      }
      const twoHandles = join(dir, 'two-handles.nvdb'); // one file, one segment per handle: two grids
      writeFileSync(twoHandles, unwrap(writeNvdb(built, 'zip')));
      files.push(join(dir, 'blosc.nvdb')); // needs the validator built with libblosc-dev
      writeFileSync(files.at(-1)!, await writeNvdbAsync(built[0]!, 'blosc'));
      built.forEach((h) => h.dispose());
      const valueTypes: ValueGridType[] = [GridType.Float, GridType.Double, GridType.Int16, GridType.Int32, GridType.Int64, GridType.UInt32, GridType.UInt8,
        GridType.Vec3f, GridType.Vec3d, GridType.Vec4f, GridType.Vec4d, GridType.RGBA8, GridType.Mask, GridType.Boolean, GridType.Fp4, GridType.Fp8, GridType.Fp16];
      for (const gridType of valueTypes) {
        const components = gridType === GridType.Vec3f || gridType === GridType.Vec3d ? 3 : [GridType.Vec4f, GridType.Vec4d, GridType.RGBA8].includes(gridType) ? 4 : 1;
        const count = coords.length / 3;
        const values = gridType === GridType.Int64 ? new BigInt64Array(count).fill(-7n) : new Float64Array(components * count).map((_, i) => (i % 5) + 1);
        const gridClass = gridType === GridType.Float || gridType === GridType.Fp8 ? GridClass.FogVolume : gridType === GridType.Vec3f ? GridClass.Staggered : undefined;
        const handle = unwrap(voxelsToGrid(backend, new HostResource(backend), { coords, values }, { gridType, background: gridType === GridType.Int64 ? 3n : 0, ...(gridClass === undefined ? {} : { gridClass }), name: GridType[gridType] }));
        files.push(join(dir, `voxels-${GridType[gridType]}.nvdb`));
        writeFileSync(files.at(-1)!, unwrap(writeNvdb(handle, 'zip')));
        handle.dispose();
      }
      const longName = `${'a-long-name-'.repeat(25)}${'ü'.repeat(10)}`;
      const named = unwrap(voxelsToGrid(backend, new HostResource(backend), { coords, values: new Float32Array(4).fill(2) }, { gridType: GridType.Float, name: longName }));
      files.push(join(dir, 'long-name.nvdb'));
      writeFileSync(files.at(-1)!, unwrap(writeNvdb(named, 'zip')));
      const report = execFileSync(validator, [...files, twoHandles], { encoding: 'utf8' });
      expect(report).toContain(`"${longName}"`); // NanoVDB's gridName() finds the whole name in the blind data
      expect(report.split('\n').filter((l) => l.includes('valid (CheckMode::Full)'))).toHaveLength(files.length + 2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
