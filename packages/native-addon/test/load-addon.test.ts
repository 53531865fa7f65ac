import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { loadAddon, type AddonSpec } from '../src/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const OVERRIDE = 'HS_NATIVE_ADDON_TEST_PATH';

/** A spec for `file` under a fresh package folder (the loader caches per path, so each test gets its own). */
function specIn(file: string, extra: Partial<AddonSpec> = {}): AddonSpec {
  return {
    name: 'demo addon',
    packageRoot: mkdtempSync(join(tmpdir(), 'hs-native-addon-')),
    file,
    buildCommand: 'pnpm --filter @hs/demo run build:addon',
    buildRequires: 'cmake and a C++ compiler',
    ...extra,
  };
}

afterEach(() => {
  delete process.env[OVERRIDE];
});

describe('loadAddon', () => {
  it('reports a missing file with its path, what to install and the build command, and what to do meanwhile', () => {
    const spec = specIn('build/demo.node', { meanwhile: 'until then use the host backend' });
    const path = join(spec.packageRoot, 'build/demo.node');
    expect(loadAddon(spec)).toEqual({
      ok: false,
      reason: `the demo addon is not built (${path} is missing); install cmake and a C++ compiler, then run \`pnpm --filter @hs/demo run build:addon\`; until then use the host backend`,
    });
    expect(loadAddon({ ...specIn('build/demo.node'), meanwhile: undefined })).toMatchObject({ ok: false, reason: expect.stringMatching(/build:addon`$/) });
  });

  it('takes the path from the override variable when it is set and not empty, and says so when that file is missing', () => {
    const spec = specIn('build/demo.node', { envOverride: OVERRIDE });
    const elsewhere = join(mkdtempSync(join(tmpdir(), 'hs-native-addon-elsewhere-')), 'demo.node');
    process.env[OVERRIDE] = elsewhere;
    expect(loadAddon(spec)).toEqual({
      ok: false,
      reason: `the demo addon is not built (${elsewhere} is missing; ${OVERRIDE} names it); install cmake and a C++ compiler, then run \`pnpm --filter @hs/demo run build:addon\``,
    });
    process.env[OVERRIDE] = resolve(here, 'fixtures/answer-addon.cjs');
    expect(loadAddon(spec)).toMatchObject({ ok: true, addon: { answer: 42 }, path: process.env[OVERRIDE] });
    process.env[OVERRIDE] = '';
    expect(loadAddon(spec)).toMatchObject({ ok: false, reason: expect.stringContaining(`(${join(spec.packageRoot, 'build/demo.node')} is missing)`) });
  });

  it('reports a file that does not load with the loader error and the rebuild command, the error as cause', () => {
    const spec = specIn('demo.node');
    const path = join(spec.packageRoot, 'demo.node');
    writeFileSync(path, 'not an ELF file');
    const load = loadAddon(spec);
    expect(load.ok).toBe(false);
    if (load.ok) return;
    expect(load.reason).toMatch(new RegExp(`^the demo addon at ${path} failed to load \\(.+\\); rebuild it with \`pnpm --filter @hs/demo run build:addon\`$`));
    expect(load.cause).toBeInstanceOf(Error);
    expect(load.reason).toContain((load.cause as Error).message);
  });

  it('loads a file once per path and returns the same outcome afterwards, a miss included', () => {
    const spec = { ...specIn('answer-addon.cjs'), packageRoot: resolve(here, 'fixtures') };
    const first = loadAddon<{ answer: number }>(spec);
    expect(first).toEqual({ ok: true, addon: { answer: 42 }, path: join(spec.packageRoot, 'answer-addon.cjs') });
    expect(loadAddon(spec)).toBe(first);

    const later = specIn('later.cjs');
    const miss = loadAddon(later);
    writeFileSync(join(later.packageRoot, 'later.cjs'), 'module.exports = {};');
    expect(loadAddon(later)).toBe(miss);
    expect(loadAddon({ ...later, file: './later.cjs' })).toBe(miss);
  });

  // A real Node-API addon, when the repository has built one (pnpm install builds @hs/ipc's).
  const ipcAddon = resolve(here, '../../ipc/build/hs_ipc.node');
  if (!existsSync(ipcAddon)) console.log(`loadAddon native test skipped: ${ipcAddon} is not built`);
  it.skipIf(!existsSync(ipcAddon))('loads a built Node-API addon', () => {
    const load = loadAddon<{ abiVersion: number }>({ ...specIn('hs_ipc.node'), packageRoot: dirname(ipcAddon) });
    expect(load.ok).toBe(true);
    if (load.ok) expect(typeof load.addon.abiVersion).toBe('number');
  });
});
