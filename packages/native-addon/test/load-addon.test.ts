import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { PREBUILT_PLATFORMS, loadAddon, prebuiltPackage, prebuiltPlatform, type AddonSpec } from '../src/index.js';

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
      reason: `the demo addon is not installed (${path} is missing); to build it from source install cmake and a C++ compiler, then run \`pnpm --filter @hs/demo run build:addon\`; until then use the host backend`,
    });
    expect(loadAddon({ ...specIn('build/demo.node'), meanwhile: undefined })).toMatchObject({ ok: false, reason: expect.stringMatching(/build:addon`$/) });
  });

  it('takes the path from the override variable when it is set and not empty, and says so when that file is missing', () => {
    const spec = specIn('build/demo.node', { envOverride: OVERRIDE });
    const elsewhere = join(mkdtempSync(join(tmpdir(), 'hs-native-addon-elsewhere-')), 'demo.node');
    process.env[OVERRIDE] = elsewhere;
    expect(loadAddon(spec)).toEqual({
      ok: false,
      reason: `the demo addon is not installed (${elsewhere} is missing; ${OVERRIDE} names it); to build it from source install cmake and a C++ compiler, then run \`pnpm --filter @hs/demo run build:addon\``,
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
    expect(load.reason).toMatch(new RegExp(`^the demo addon at ${path} failed to load \\(.+\\); rebuild it from source with \`pnpm --filter @hs/demo run build:addon\`$`));
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

  describe('with a prebuilt platform package', () => {
    /** A package folder that lists this platform's prebuilt package, installed beside it in node_modules. */
    function withPrebuilt(files: Record<string, string>): AddonSpec {
      const spec = specIn('build/demo.cjs', { prebuilt: 'demo.cjs' });
      const prebuiltDir = join(spec.packageRoot, 'node_modules', ...prebuiltPackage().split('/'));
      mkdirSync(prebuiltDir, { recursive: true });
      writeFileSync(join(prebuiltDir, 'package.json'), JSON.stringify({ name: prebuiltPackage(), version: '0.0.0' }));
      for (const [file, code] of Object.entries(files)) {
        const path = join(spec.packageRoot, file.replace('<prebuilt>', join('node_modules', prebuiltPackage())));
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, code);
      }
      return spec;
    }
    const onPrebuiltPlatform = PREBUILT_PLATFORMS.includes(prebuiltPlatform());

    it('names this process\'s platform the way the packages are named', () => {
      expect(prebuiltPlatform()).toMatch(/^(linux-\w+-(gnu|musl)|\w+-\w+)$/);
      expect(prebuiltPackage()).toBe(`@hs/native-${prebuiltPlatform()}`);
    });

    it.skipIf(!onPrebuiltPlatform)('loads the prebuilt first, then the local build, and says why neither when both are missing', () => {
      const both = withPrebuilt({ '<prebuilt>/demo.cjs': 'module.exports = { from: "prebuilt" };', 'build/demo.cjs': 'module.exports = { from: "build" };' });
      expect(loadAddon(both)).toMatchObject({ ok: true, addon: { from: 'prebuilt' } });
      const localOnly = withPrebuilt({ 'build/demo.cjs': 'module.exports = { from: "build" };' });
      expect(loadAddon(localOnly)).toMatchObject({ ok: true, addon: { from: 'build' }, path: join(localOnly.packageRoot, 'build/demo.cjs') });
      const neither = withPrebuilt({});
      expect(loadAddon(neither)).toMatchObject({
        ok: false,
        reason: `the demo addon is not installed (${prebuiltPackage()} lacks demo.cjs, and ${join(neither.packageRoot, 'build/demo.cjs')} is missing); to build it from source install cmake and a C++ compiler, then run \`pnpm --filter @hs/demo run build:addon\``,
      });
      const notInstalled = specIn('build/demo.cjs', { prebuilt: 'demo.cjs' });
      expect(loadAddon(notInstalled)).toMatchObject({
        ok: false,
        reason: expect.stringContaining(`(${prebuiltPackage()} is not installed (an install that omitted optional dependencies), and ${join(notInstalled.packageRoot, 'build/demo.cjs')} is missing)`),
      });
    });

    it.skipIf(!onPrebuiltPlatform)('falls back to the local build when the prebuilt does not load, naming both when neither does', () => {
      const broken = withPrebuilt({ '<prebuilt>/demo.cjs': 'throw new Error("wrong ELF class");', 'build/demo.cjs': 'module.exports = { from: "build" };' });
      expect(loadAddon(broken)).toMatchObject({ ok: true, addon: { from: 'build' } });
      const bothBroken = withPrebuilt({ '<prebuilt>/demo.cjs': 'throw new Error("wrong ELF class");', 'build/demo.cjs': 'throw new Error("undefined symbol");' });
      const load = loadAddon(bothBroken);
      expect(load.ok).toBe(false);
      if (!load.ok) expect(load.reason).toMatch(/^the demo addon at .*demo\.cjs failed to load \(wrong ELF class\); .*; the demo addon at .*build\/demo\.cjs failed to load \(undefined symbol\); /);
    });

    it.skipIf(onPrebuiltPlatform)('says that this platform has no prebuilt yet', () => {
      const spec = specIn('build/demo.cjs', { prebuilt: 'demo.cjs' });
      expect(loadAddon(spec)).toMatchObject({ ok: false, reason: expect.stringContaining(`(hs publishes no prebuilt addon for ${prebuiltPlatform()} yet, and `) });
    });
  });

  // A real Node-API addon, when the repository has built one (pnpm build builds @hs/ipc's).
  const ipcAddon = resolve(here, '../../ipc/build/hs_ipc.node');
  if (!existsSync(ipcAddon)) console.log(`loadAddon native test skipped: ${ipcAddon} is not built`);
  it.skipIf(!existsSync(ipcAddon))('loads a built Node-API addon', () => {
    const load = loadAddon<{ abiVersion: number }>({ ...specIn('hs_ipc.node'), packageRoot: dirname(ipcAddon) });
    expect(load.ok).toBe(true);
    if (load.ok) expect(typeof load.addon.abiVersion).toBe('number');
  });
});
