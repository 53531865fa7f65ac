import { parseArgs } from 'node:util';
import type { NvdbCodec } from '@hs/nanovdb-mr';
import { buildGrid } from './build-grid.js';
import { bunnyPoints, loadPoints } from './load-points.js';

const { values } = parseArgs({
  options: {
    input: { type: 'string' },
    'voxel-size': { type: 'string', default: '0.1' },
    output: { type: 'string', default: 'out/points.nvdb' },
    codec: { type: 'string', default: 'zip' },
  },
});

const cloud = values.input === undefined ? { ok: true as const, value: bunnyPoints() } : loadPoints(values.input);
if (!cloud.ok) {
  console.error(cloud.error.message);
  process.exit(1);
}
const report = buildGrid({
  cloud: cloud.value,
  voxelSize: Number(values['voxel-size']),
  output: values.output as string,
  codec: values.codec as NvdbCodec,
});
if (!report.ok) {
  console.error(report.error.message);
  process.exit(1);
}
for (const line of report.value) console.log(line);
