import { parseArgs } from 'node:util';
import { selectBackend } from '@hs/streams';
import { runTopicConsumer, runTopicProducer, type TopicMemory } from './topic-graphs.js';

// One side of the cross-process topic run, as its own process: a consumer prints `progress N` every 1000
// frames (and `stalled N` when --stall-after makes it hang), and either side ends with one JSON line (a
// TopicRunReport). Exit status 0 when the run succeeded, or when it ended with the typed error that
// --expect-error names (a consumer whose producer is killed on purpose); 1 otherwise.
//   node --import tsx src/topic-process.ts <producer|consumer> --topic T --memory host|pinnedHost|cudaDevice
//     [--frames N] [--subscribers K] [--dir D] [--backend host|cuda] [--stall-after N] [--expect-error CODE]
const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    topic: { type: 'string' },
    memory: { type: 'string', default: 'host' },
    frames: { type: 'string', default: '1000' },
    subscribers: { type: 'string', default: '1' },
    dir: { type: 'string' },
    backend: { type: 'string', default: 'host' },
    'stall-after': { type: 'string' },
    'expect-error': { type: 'string' },
  },
});
const role = positionals[0];
const memory = values.memory as TopicMemory;
const stallAfter = values['stall-after'] === undefined ? undefined : Number(values['stall-after']);
if (
  (role !== 'producer' && role !== 'consumer') ||
  values.topic === undefined ||
  (memory !== 'host' && memory !== 'pinnedHost' && memory !== 'cudaDevice') ||
  (stallAfter !== undefined && !(Number.isSafeInteger(stallAfter) && stallAfter >= 0))
) {
  console.error('usage: topic-process <producer|consumer> --topic T [--memory host|pinnedHost|cudaDevice] [--frames N] [--subscribers K] [--dir D] [--backend host|cuda] [--stall-after N] [--expect-error CODE]');
  process.exit(2);
}
const backend = selectBackend({ backend: values.backend === 'cuda' ? 'cuda' : 'host' });
if (!backend.ok) {
  console.log(JSON.stringify({ ok: false, error: backend.error.message, frames: 0, badBytes: 0, slotsOut: -1, elapsedMs: 0 }));
  process.exit(1);
}
const common = { backend: backend.value, topic: values.topic, memory, ...(values.dir === undefined ? {} : { runtimeDirectory: values.dir }) };
const report =
  role === 'producer'
    ? await runTopicProducer({ ...common, frames: Number(values.frames), awaitSubscribers: Number(values.subscribers) })
    : await runTopicConsumer({
        ...common,
        onFrame: (n) => n % 1000 === 0 && console.log(`progress ${n}`),
        ...(stallAfter === undefined ? {} : { stallAfter, onStall: () => console.log(`stalled ${stallAfter}`) }),
      });
backend.value.dispose();
console.log(JSON.stringify(report));
const expected = values['expect-error'];
process.exitCode = report.ok || (expected !== undefined && report.error?.startsWith(`${expected}: `) === true) ? 0 : 1;
