import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const scripts = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'scripts');
const nativeAddonPackage = dirname(createRequire(import.meta.url).resolve('@hs/native-addon/package.json'));

/**
 * A throwaway package holding a copy of the build scripts, a native/CMakeLists.txt, a fake nvcc and cmake,
 * a fake cmake-js that records its arguments and fails, and @hs/native-addon (the build helper) linked in:
 * the script runs end to end without building.
 */
function fakePackage(): { dir: string; env: NodeJS.ProcessEnv } {
  const dir = mkdtempSync(join(tmpdir(), 'hs-build-addon-'));
  cpSync(scripts, join(dir, 'scripts'), { recursive: true });
  mkdirSync(join(dir, 'native'));
  writeFileSync(join(dir, 'native', 'CMakeLists.txt'), '');
  mkdirSync(join(dir, 'bin'));
  for (const tool of ['nvcc', 'cmake']) {
    writeFileSync(join(dir, 'bin', tool), '#!/bin/sh\nexit 1\n');
    chmodSync(join(dir, 'bin', tool), 0o755);
  }
  mkdirSync(join(dir, 'node_modules', 'cmake-js', 'bin'), { recursive: true });
  mkdirSync(join(dir, 'node_modules', '@hs'));
  symlinkSync(nativeAddonPackage, join(dir, 'node_modules', '@hs', 'native-addon'));
  writeFileSync(join(dir, 'node_modules', 'cmake-js', 'package.json'), '{"name":"cmake-js","version":"0.0.0"}');
  writeFileSync(
    join(dir, 'node_modules', 'cmake-js', 'bin', 'cmake-js'),
    `require('node:fs').writeFileSync(${JSON.stringify(join(dir, 'cmake-js-args.json'))}, JSON.stringify(process.argv.slice(2))); process.exit(2);\n`,
  );
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${join(dir, 'bin')}:${process.env['PATH'] ?? ''}`, CUDACXX: join(dir, 'bin', 'nvcc') };
  delete env['HS_SKIP_NATIVE'];
  return { dir, env };
}

function runScript(dir: string, env: NodeJS.ProcessEnv, args: string[] = []): { status: number | null; lines: string[] } {
  const r = spawnSync(process.execPath, [join(dir, 'scripts', 'build-addon.mjs'), ...args], { env, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, lines: r.stdout.split('\n').filter((l) => l !== '') };
}

describe('the build script (scripts/build-addon.mjs, run by hs-build-addon and, with --optional, by pnpm build)', () => {
  it('announces the nvcc build in one line, with the core count and HS_SKIP_NATIVE, before it starts, and exits 1 when it fails', () => {
    const { dir, env } = fakePackage();
    const { status, lines } = runScript(dir, env);
    expect(status).toBe(1);
    const cores = availableParallelism();
    expect(lines[0]).toBe(
      `@hs/cuda-native: building the CUDA addon with nvcc (a few minutes on ${cores} core${cores === 1 ? '' : 's'}; set HS_SKIP_NATIVE=1 to skip — hs then runs on the host backend)`,
    );
    expect(JSON.parse(readFileSync(join(dir, 'cmake-js-args.json'), 'utf8'))).toContain('compile');
    expect(lines.slice(1)).toEqual([`@hs/cuda-native: the CUDA addon build failed (see ${join(dir, 'build', 'addon-build.log')}); hs runs on the host backend.`]);
  });

  it('--optional (the repository build) reports a failed build in the same lines and exits 0', () => {
    const { dir, env } = fakePackage();
    const { status, lines } = runScript(dir, env, ['--optional']);
    expect(status).toBe(0);
    expect(lines.at(-1)).toBe(`@hs/cuda-native: the CUDA addon build failed (see ${join(dir, 'build', 'addon-build.log')}); hs runs on the host backend.`);
  });

  it('HS_SKIP_NATIVE=1 skips the build with one line and never starts cmake-js', () => {
    const { dir, env } = fakePackage();
    const { status, lines } = runScript(dir, { ...env, HS_SKIP_NATIVE: '1' });
    expect(status).toBe(0);
    expect(lines).toEqual(['@hs/cuda-native: HS_SKIP_NATIVE=1, the CUDA addon was not built; hs runs on the host backend.']);
    expect(existsSync(join(dir, 'cmake-js-args.json'))).toBe(false);
    expect(existsSync(join(dir, 'build'))).toBe(false);
  });
});
