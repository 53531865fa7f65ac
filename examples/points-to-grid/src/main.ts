import { type HsError, unwrap } from '@hs/streams';
import { buildGrid } from './build-grid.js';
import { parseCliOptions } from './cli-options.js';
import { bunnyPoints, loadPoints } from '@hs/example-point-cloud-input';

try {
  const options = unwrap(parseCliOptions(process.argv.slice(2)));
  const cloud = options.input === undefined ? bunnyPoints() : unwrap(loadPoints(options.input));
  for (const line of await buildGrid({ ...options, cloud })) console.log(line);
} catch (error) {
  console.error((error as HsError).message);
  process.exit(1);
}
