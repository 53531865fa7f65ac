import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compile } from '@hs/compiler';
import { checkPipelineModule } from '@hs/runtime';
import { ErrorCode, unwrap } from '@hs/streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli.js';
import sensorFusionModule from '../src/pipeline-module.js';
import { EDGES, RECORD_FILE } from '../src/pipeline.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hs-sensor-fusion-module-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const quiet = { log: () => undefined, error: () => undefined };

describe('sensor-fusion as a PipelineModule and a command line', () => {
  it('is a valid pipeline module named sensor-fusion whose build compiles to the rate-sized plan', async () => {
    expect(checkPipelineModule(sensorFusionModule, 'pipeline-module.ts').ok).toBe(true);
    expect(sensorFusionModule.name).toBe('sensor-fusion');
    const request = unwrap(sensorFusionModule.parseArguments(['--seconds', '2', '--out', join(dir, 'module'), '--backend', 'host'], quiet));
    if (request.kind !== 'build') throw new Error('expected a build request');
    const build = await sensorFusionModule.build(request.options);
    expect(build.expectedFrames).toBe(2 * (60 + 1000));
    expect(build.sessionOptions).toEqual({ backend: 'host' });
    const plan = unwrap(compile(build.graph, build.compileOptions));
    expect(plan.edge(EDGES.imu)?.queueDepth).toBe(34);
  });

  it('refuses a --seconds that is not a whole number from 1 to 3600, naming the option and the value', () => {
    for (const bad of ['0', '3601', '1.5', 'x', '-1', '1_0', 'NaN', '']) {
      const parsed = sensorFusionModule.parseArguments(['--seconds', bad], quiet);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) {
        expect(parsed.error.code).toBe(ErrorCode.InvalidArgument);
        expect(parsed.error.message).toBe(`InvalidArgument: --seconds takes a whole number from 1 to 3600 in standard notation (30, 1e3), got '${bad}'`);
      }
    }
  });

  it('runs 1 s in real time from the command line: every frame and sample emitted, fused and summarised', async () => {
    const outDir = join(dir, 'cli', 'out');
    const lines: string[] = [];
    const errors: string[] = [];
    const code = await runCli(['--', '--seconds', '1', '--out', outDir], { log: (l) => lines.push(...l.split('\n')), error: (l) => errors.push(l) }, { HS_BACKEND: 'host' });
    expect(errors).toEqual([]);
    expect(code).toBe(0);
    expect(lines).toContain('  imu.samples->fusion.imu: queueDepth 34 (automatic), pool pool:imu.samples');
    expect(lines).toContain('  headroom 2/1; nominal arrivals 17; recommendation 34');
    // The samples are stamped with their activation times, so on a loaded machine they span more than the 1 s asked
    // for; what holds on any machine is that the integrated yaw follows the motion model over that span.
    const fused = lines.find((l) => l.startsWith('fused '));
    const [, yaw, span, model] = (fused?.match(/^fused 60 frames with 1000 IMU samples; integrated yaw (\d+\.\d{4}) rad over (\d+\.\d{3}) s of samples \(motion model: 0\.5 rad\/s x \2 s = (\d+\.\d{4}) rad\)$/) ?? []).map(Number);
    expect(fused).toBeDefined();
    expect(span).toBeGreaterThanOrEqual(0.99);
    expect(Math.abs(yaw! - model!)).toBeLessThan(0.01);
    const recorded = lines.find((l) => l.startsWith('recorder: '));
    const [, written, dropped] = (recorded?.match(/^recorder: (\d+) results written to .*, (\d+) dropped on its dropOldest edge$/) ?? []).map(Number);
    // Every fusion result is either written or dropped on the recorder's edge (none lost to an empty pool here).
    expect(written! + dropped!).toBe(60);
    const file = (await readFile(join(outDir, RECORD_FILE), 'utf8')).trimEnd().split('\n');
    expect(file).toHaveLength(written!);
  });
});
