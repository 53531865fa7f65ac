import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');

describe('the packed @hs/cuda-native tarball', () => {
  it('carries the native sources its CMakeLists.txt builds, and leaves no copy behind', () => {
    const destination = mkdtempSync(join(tmpdir(), 'hs-cuda-native-pack-'));
    try {
      execFileSync('pnpm', ['pack', '--pack-destination', destination], { cwd: packageDir, stdio: 'pipe' });
      const [tarball] = readdirSync(destination).filter((f) => f.endsWith('.tgz'));
      expect(tarball).toBeDefined();
      const entries = execFileSync('tar', ['-tzf', join(destination, tarball!)], { encoding: 'utf8' }).split('\n');
      for (const path of [
        'package/CMakeLists.txt',
        'package/scripts/build-addon.mjs',
        'package/scripts/copy-native-sources.mjs',
        'package/native/CMakeLists.txt',
        'package/native/include/hs/hs.h',
        'package/native/src/addon.cc',
        'package/native/src/kernel-bindings.cc',
        'package/native/src/image-kernels.cu',
        'package/native/test-addon/abi-test-addon.cu',
      ]) {
        expect(entries).toContain(path);
      }
      expect(entries.some((e) => e.startsWith('package/build/') || e.startsWith('package/node_modules/'))).toBe(false);
      expect(existsSync(join(packageDir, 'native'))).toBe(false);
    } finally {
      rmSync(destination, { recursive: true, force: true });
    }
  }, 60_000);
});
