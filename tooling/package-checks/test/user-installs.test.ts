import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { installClosure } from '../src/install-closure.js';
import { installOffline, installTimeWork, installedPackages } from '../src/offline-install.js';
import { tarballOf } from '../src/packed-tarball.js';
import { publicPackages, repositoryRoot } from '../src/public-packages.js';
import { extractReadmeInstalls } from '../src/readme-installs.js';

const packed = inject('packed');
const scratchDir = inject('scratchDir');
const installs = extractReadmeInstalls(readFileSync(join(repositoryRoot, 'README.md'), 'utf8'));

/** The public packages an install of `names` brings, by name, sorted: they and what they reach. */
function closureOf(names: readonly string[]): string[] {
  return [...new Set(names.flatMap((name) => installClosure(name, publicPackages()).map((p) => p.name)))].sort();
}

describe('the README install sections, each installed offline from the packed tarballs in a fresh project, stub build tools first on the PATH', () => {
  it('cover the three users: memory resources only, pipelines, and CUDA', () => {
    expect(installs.map((i) => [i.section, i.command])).toEqual([
      ['Memory resources and NanoVDB grids only', 'npm install @hs/nanovdb-mr'],
      ['Pipelines', 'npm install @hs/runtime'],
      ['CUDA', 'npm install @hs/streams'],
    ]);
  });

  it('npm install @hs/nanovdb-mr brings @hs/streams with the optional CUDA addon, prebuilt, and nothing else', () => {
    expect(closureOf(['@hs/nanovdb-mr'])).toEqual(['@hs/cuda-native', '@hs/nanovdb-mr', '@hs/native-addon', '@hs/native-linux-x64-gnu', '@hs/streams']);
  });

  installs.forEach((install, i) => {
    describe(`${install.section}: \`${install.command}\` (README line ${install.line})`, () => {
      const dir = join(scratchDir, `user-${i + 1}`);
      const expected = closureOf(install.packages);
      let ran: string[] = [];

      beforeAll(() => {
        ran = installOffline(dir, expected.map((name) => ({ name, tarball: tarballOf(packed, name) })));
      });

      it('installs only those hs packages, none with an install script or binding.gyp, and starts no compiler or build tool', () => {
        expect(ran, 'stub build tools that ran').toEqual([]);
        expect(installedPackages(dir)).toEqual(expected);
        expect(installTimeWork(dir)).toEqual([]);
      });

      it(`runs the program after it${install.prints === null ? '' : `, which prints "${install.prints}"`}`, () => {
        writeFileSync(join(dir, 'program.mjs'), install.code);
        const run = spawnSync(process.execPath, ['program.mjs'], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
        expect(run.stderr, 'standard error').toBe('');
        expect(run.status, `exit code; stdout:\n${run.stdout}`).toBe(0);
        if (install.prints !== null) expect(run.stdout).toContain(install.prints);
      });
    });
  });
});
