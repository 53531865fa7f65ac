import { explainCapacity } from './explain-capacity.js';

const explained = await explainCapacity(6);
if (!explained.ok) {
  console.error(explained.error.message);
  process.exitCode = 1;
} else {
  console.log(explained.value.join('\n'));
}
