import type { HsError } from '@hs/streams';
import { explainCapacity } from './explain-capacity.js';

try {
  console.log((await explainCapacity(6)).join('\n'));
} catch (error) {
  console.error((error as HsError).message);
  process.exitCode = 1;
}
