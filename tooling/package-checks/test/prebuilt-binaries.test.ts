import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PREBUILT_FLOORS } from '@hs/native-addon';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { tarballOf } from '../src/packed-tarball.js';
import { repositoryRoot } from '../src/public-packages.js';

const packed = inject('packed');
const PLATFORM_PACKAGE = '@hs/native-linux-x64-gnu';
const ADDONS = ['hs_cuda.node', 'hs_ipc.node'];
/** glibc's own libraries: all a prebuilt addon may link (libpthread, libm and librt are parts of glibc). */
const GLIBC_LIBRARIES = ['libc.so.6', 'libdl.so.2', 'libpthread.so.0', 'libm.so.6', 'librt.so.1', 'ld-linux-x86-64.so.2'];

const has = (tool: string): boolean => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;
const binutils = has('readelf') && has('objdump');
if (!binutils) console.log('prebuilt binary checks skipped: readelf and objdump (binutils) are not installed');

/** `2.36` > `2.4`: compares dotted versions numerically. */
function compareVersions(a: string, b: string): number {
  const [x, y] = [a.split('.').map(Number), b.split('.').map(Number)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}

describe.skipIf(!binutils)(`the prebuilt addons in the packed ${PLATFORM_PACKAGE}`, () => {
  const dir = mkdtempSync(join(inject('scratchDir'), 'prebuilt-'));
  beforeAll(() => {
    execFileSync('tar', ['-xzf', tarballOf(packed, PLATFORM_PACKAGE), '-C', dir]);
  });

  for (const addon of ADDONS) {
    it(`${addon} links only glibc and carries libstdc++ and libgcc statically`, () => {
      const path = join(dir, 'package', addon);
      const needed = [...execFileSync('readelf', ['-d', path], { encoding: 'utf8' }).matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1]!);
      expect(needed.filter((library) => !GLIBC_LIBRARIES.includes(library)), `${addon} NEEDED ${needed.join(', ')}`).toEqual([]);
      const versions = new Set(execFileSync('objdump', ['-T', path], { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 }).match(/\b(?:GLIBCXX|CXXABI|GCC)_[0-9.]+/g) ?? []);
      expect([...versions], 'symbol versions of libstdc++ or libgcc').toEqual([]);
    });
  }

  it('hs_cuda.node carries no test kernel (the hs.test.* kernels live in the unpublished test addon)', () => {
    expect(readFileSync(join(dir, 'package', 'hs_cuda.node')).includes('hs.test.')).toBe(false);
  });

  it(`the newest glibc symbol version the addons import is PREBUILT_FLOORS.glibc (${PREBUILT_FLOORS.glibc}), which the READMEs and hs doctor state`, () => {
    const glibc = ADDONS.flatMap((addon) => execFileSync('objdump', ['-T', join(dir, 'package', addon)], { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 }).match(/\bGLIBC_[0-9.]+/g) ?? [])
      .map((version) => version.slice('GLIBC_'.length))
      .sort(compareVersions);
    expect(glibc.at(-1)).toBe(PREBUILT_FLOORS.glibc);
    const floors = `glibc ${PREBUILT_FLOORS.glibc} or newer and an NVIDIA driver ${PREBUILT_FLOORS.nvidiaDriver} or newer`;
    for (const readme of ['README.md', 'packages/native-linux-x64-gnu/README.md']) {
      expect(readFileSync(join(repositoryRoot, readme), 'utf8').replace(/\s+/g, ' '), readme).toContain(floors);
    }
  });
});
