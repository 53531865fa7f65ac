import { parseArgs } from 'node:util';
import { selectBackend } from '@hs/streams';
import { runTopicConsumer, runTopicProducer, type TopicMemory } from './topic-graphs.js';

// One side of the cross-process topic run, as its own process: a consumer prints `progress N` every 1000
// frames, and either side ends with one JSON line (a TopicRunReport).
//   node --import tsx src/topic-process.ts <producer|consumer> --topic T --memory host|cudaDevice
//     [--frames N] [--subscribers K] [--dir D] [--backend host|cuda]
const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    topic: { type: 'string' },
    memory: { type: 'string', default: 'host' },
    frames: { type: 'string', default: '1000' },
    subscribers: { type: 'string', default: '1' },
    dir: { type: 'string' },
    backend: { type: 'string', default: 'host' },
  },
});
const role = positionals[0];
const memory = values.memory as TopicMemory;
if ((role !== 'producer' && role !== 'consumer') || values.topic === undefined || (memory !== 'host' && memory !== 'cudaDevice')) {
  console.error('usage: topic-process <producer|consumer> --topic T [--memory host|cudaDevice] [--frames N] [--subscribers K] [--dir D] [--backend host|cuda]');
  process.exit(2);
}
const backend = selectBackend({ backend: values.backend === 'cuda' ? 'cuda' : 'host' });
if (!backend.ok) {
  console.log(JSON.stringify({ ok: false, error: `${backend.error.code}: ${backend.error.message}`, frames: 0, badBytes: 0, slotsOut: -1, elapsedMs: 0 }));
  process.exit(1);
}
const common = { backend: backend.value, topic: values.topic, memory, ...(values.dir === undefined ? {} : { runtimeDirectory: values.dir }) };
const report =
  role === 'producer'
    ? await runTopicProducer({ ...common, frames: Number(values.frames), awaitSubscribers: Number(values.subscribers) })
    : await runTopicConsumer({ ...common, onFrame: (n) => n % 1000 === 0 && console.log(`progress ${n}`) });
backend.value.dispose();
console.log(JSON.stringify(report));
process.exitCode = report.ok ? 0 : 1;
