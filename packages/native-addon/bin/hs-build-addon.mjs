#!/usr/bin/env node
// `npx hs-build-addon [cuda] [ipc]`: builds hs's addons from source in the project it runs in, for a
// platform without a prebuilt package (linux-arm64 today) or a toolkit of the user's own. It finds the
// installed @hs/cuda-native and @hs/ipc (from the current folder, then through @hs/streams, whose optional
// dependency @hs/cuda-native is) and runs each one's build:addon script, verbosely. Without names it builds
// every one that is installed. Exits 1 when a build is skipped or fails, naming what is missing.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const ADDONS = { cuda: '@hs/cuda-native', ipc: '@hs/ipc' };
const USAGE = 'usage: hs-build-addon [cuda] [ipc]   (no name: every installed one)';

/** The folder of `name`, installed in the project at the current folder (directly, or under @hs/streams), or null. */
function installed(name) {
  const project = join(process.cwd(), 'package.json');
  const bases = [() => project, () => createRequire(project).resolve('@hs/streams/package.json')];
  for (const base of bases) {
    try {
      return dirname(createRequire(base()).resolve(`${name}/package.json`));
    } catch {
      // not reachable from there
    }
  }
  return null;
}

const asked = process.argv.slice(2);
const unknown = asked.filter((arg) => !(arg in ADDONS));
if (unknown.length > 0) {
  console.error(`hs-build-addon: unknown addon ${unknown.join(', ')}; ${USAGE}`);
  process.exit(2);
}
const targets = (asked.length > 0 ? asked : Object.keys(ADDONS)).map((key) => ({ name: ADDONS[key], dir: installed(ADDONS[key]) }));
const missing = targets.filter((t) => t.dir === null && asked.length > 0);
if (missing.length > 0) {
  console.error(`hs-build-addon: ${missing.map((t) => t.name).join(' and ')} not installed in ${process.cwd()}; install it first`);
  process.exit(1);
}
const found = targets.filter((t) => t.dir !== null);
if (found.length === 0) {
  console.error(`hs-build-addon: neither @hs/cuda-native nor @hs/ipc is installed in ${process.cwd()}; ${USAGE}`);
  process.exit(1);
}
let status = 0;
for (const { dir } of found) {
  const run = spawnSync(process.execPath, [join(dir, 'scripts', 'build-addon.mjs'), '--verbose'], { stdio: 'inherit' });
  if (run.status !== 0) status = 1;
}
process.exit(status);
