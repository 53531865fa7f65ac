// Cross-process topics: a producer graph publishes its output to the topic `frames`; a consumer graph in
// a second Node process subscribes an input to it. The bytes travel through POSIX shared memory, the
// 256-byte descriptors over a Unix socket. Run with no argument, this file starts the consumer process
// itself (the same file with `--consumer <dir>`). `pnpm test` runs it on the host backend.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Graph, Operator, compile, type ExecutionContext, type InputPort, type OperatorSpec, type OutputPort } from '@hs/compiler';
import { IpcBoundaries, ipcAvailability } from '@hs/ipc';
import { RunSession } from '@hs/runtime';
import { HostBackend, MemoryKind, OK_VOID, unwrap, type Result } from '@hs/streams';
import { DType } from '@hs/tensor';

const VALUES = 64;
const FRAMES = 100;

/** Host writer: frame i holds the int32 values i * 1000 + k. */
class CountingSource extends Operator {
  values!: OutputPort;
  private sent = 0;

  setup(spec: OperatorSpec): void {
    this.values = spec.output('values').producesTensor({
      representation: { memoryKind: MemoryKind.Host, dtype: DType.int32, rank: 1 },
      bounds: { maxByteSpan: VALUES * 4 },
      storage: 'runtimePool',
    });
  }

  compute(ctx: ExecutionContext): Result<void> {
    const loan = ctx.allocateTensor(this.values, { shape: [VALUES], dtype: DType.int32 });
    if (!loan.ok) return loan; // ResourceExhausted: every slot is still held by a subscriber
    const guard = loan.value.write(null);
    if (!guard.ok) return guard;
    const view = guard.value.tensor.mutableHostView();
    if (!view.ok) return view;
    const values = new Int32Array(view.value.buffer, view.value.byteOffset, VALUES);
    for (let k = 0; k < VALUES; k++) values[k] = this.sent * 1000 + k;
    const committed = guard.value.commit();
    if (!committed.ok) return committed;
    this.sent += 1;
    if (this.sent === FRAMES) ctx.finish();
    return ctx.emit(this.values, loan.value);
  }
}

/** Host reader: checks every value of every frame. */
class CheckingSink extends Operator {
  values!: InputPort;
  received = 0;
  wrong = 0;

  setup(spec: OperatorSpec): void {
    this.values = spec.input('values', { memoryKind: MemoryKind.Host, dtype: DType.int32, rank: 1 });
  }

  compute(ctx: ExecutionContext): Result<void> {
    const tensor = ctx.receive(this.values);
    if (tensor === undefined) return OK_VOID;
    const view = tensor.hostView(); // host-written: nothing to wait for
    if (!view.ok) return view;
    const values = new Int32Array(view.value.buffer, view.value.byteOffset, VALUES);
    for (let k = 0; k < VALUES; k++) if (values[k] !== this.received * 1000 + k) this.wrong += 1;
    this.received += 1;
    return OK_VOID;
  }
}

async function runProducer(runtimeDirectory: string): Promise<void> {
  const graph = new Graph('producer');
  const source = graph.add(new CountingSource('source'));
  graph.publish(source.values, 'frames', { subscriberQueueDepth: 3 });
  const plan = unwrap(compile(graph));
  console.log(plan.topics.map((t) => `${t.direction} ${t.topic}: ${t.memoryKind} over ${t.transport}`).join('\n'));

  const backend = new HostBackend();
  const boundaries = await IpcBoundaries.prepare(plan, { backend, runtimeDirectory, awaitSubscribers: 1 });
  const session = unwrap(RunSession.create(plan, { backend, boundaries }));
  const metrics = await session.run();
  session.dispose();
  console.log(`producer: ${metrics.frames} frames published, ${metrics.pools[0]!.outstanding} slots outstanding`);
}

async function runConsumer(runtimeDirectory: string): Promise<void> {
  const graph = new Graph('consumer');
  const sink = graph.add(new CheckingSink('sink'));
  graph.subscribe('frames', sink.values);
  const plan = unwrap(compile(graph));

  const backend = new HostBackend();
  const boundaries = await IpcBoundaries.prepare(plan, { backend, runtimeDirectory });
  const session = unwrap(RunSession.create(plan, { backend, boundaries }));
  await session.run(); // ends when the publisher closes the topic
  session.dispose();
  console.log(`consumer: ${sink.received} frames received, ${sink.wrong} values wrong`);
}

const availability = ipcAvailability();
if (!availability.available) throw new Error(`IPC is not available here: ${availability.reason}`);
const [role, directory] = process.argv.slice(2);
if (role === '--consumer') {
  await runConsumer(directory!);
} else {
  const runtimeDirectory = mkdtempSync(join(tmpdir(), 'hs-topics-'));
  const consumer = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--consumer', runtimeDirectory], { stdio: 'inherit' });
  const consumerExit = new Promise<number | null>((done) => consumer.on('exit', done));
  await runProducer(runtimeDirectory);
  const code = await consumerExit;
  rmSync(runtimeDirectory, { recursive: true, force: true });
  if (code !== 0) throw new Error(`the consumer process exited with ${code}`);
}
