import { buildGrid } from './build-grid.js';
import { parseCliOptions } from './cli-options.js';
import { bunnyPoints, loadPoints } from '@hs/example-point-cloud-input';

const options = parseCliOptions(process.argv.slice(2));
const cloud = !options.ok ? options : options.value.input === undefined ? { ok: true as const, value: bunnyPoints() } : loadPoints(options.value.input);
const report = !options.ok ? options : !cloud.ok ? cloud : await buildGrid({ ...options.value, cloud: cloud.value });
if (!report.ok) {
  console.error(report.error.message);
  process.exit(1);
}
for (const line of report.value) console.log(line);
