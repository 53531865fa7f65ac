import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ExecutionContext, Graph, type InputPort, Operator, type OperatorSpec, type OutputPort, compile, inputMaxByteSpan, tensorByteSpan } from '@hs/compiler';
import { RunSession } from '@hs/runtime';
import { ErrorCode, HostBackend, MemoryKind, OK_VOID, type Result, unwrap } from '@hs/streams';
import { DType } from '@hs/tensor';
import { afterAll, describe, expect, it } from 'vitest';
import { IpcBoundaries, ipcAvailability } from '../src/index.js';
import { CountingSource, VALUES } from './fixtures/counting-source.js';

const available = ipcAvailability();
if (!available.available) console.log(`graph topic bound tests skipped: ${available.reason}`);
const dir = mkdtempSync(join(tmpdir(), 'hs-topic-bounds-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Imports int32 frames from a topic and emits their first half into its own runtime pool, whose slot
 * bound is derived from the topic's declared bound: inputMaxByteSpan(input) / 2.
 */
class FirstHalf extends Operator {
  in!: InputPort;
  out!: OutputPort;
  constructor() {
    super('half');
  }
  setup(spec: OperatorSpec): void {
    this.in = spec.input('values', { memoryKind: MemoryKind.Host, dtype: DType.int32, rank: 1 });
    this.out = spec
      .output('half')
      .producesTensor({ representation: { memoryKind: MemoryKind.Host, dtype: DType.int32, rank: 1 }, storage: 'runtimePool' }, inputMaxByteSpan(this.in).ceilingDividedBy(tensorByteSpan(2)));
  }
  async compute(ctx: ExecutionContext): Promise<Result<void>> {
    const tensor = ctx.receive(this.in)!;
    await tensor.synchronizeForHost();
    const source = unwrap(tensor.hostView());
    const loan = ctx.allocateTensor(this.out, { shape: [VALUES / 2], dtype: DType.int32 });
    if (!loan.ok) return loan;
    const guard = unwrap(loan.value.write(null));
    unwrap(guard.tensor.mutableHostView()).set(source.subarray(0, (VALUES / 2) * 4));
    unwrap(guard.commit());
    return ctx.emit(this.out, loan.value);
  }
}

class HalfSink extends Operator {
  in!: InputPort;
  received = 0;
  wrong = 0;
  constructor() {
    super('sink');
  }
  setup(spec: OperatorSpec): void {
    this.in = spec.input('half', { memoryKind: MemoryKind.Host, dtype: DType.int32, rank: 1 });
  }
  compute(ctx: ExecutionContext): Result<void> {
    const view = unwrap(ctx.receive(this.in)!.hostView());
    const values = new Int32Array(view.buffer, view.byteOffset, VALUES / 2);
    for (let k = 0; k < VALUES / 2; k++) if (values[k] !== this.received * 1000 + k) this.wrong += 1;
    this.received += 1;
    return OK_VOID;
  }
}

function consumer(topic: string, maxByteSpan: number) {
  const graph = new Graph('half-consumer');
  const half = graph.add(new FirstHalf());
  const sink = graph.add(new HalfSink());
  graph.addFlow(half.out, sink.in);
  graph.subscribe(topic, half.in, { maxByteSpan });
  return { plan: unwrap(compile(graph)), sink };
}

async function run(topic: string, frames: number, maxByteSpan: number) {
  const backend = new HostBackend();
  const p = new Graph('producer');
  const source = p.add(new CountingSource(frames));
  p.publish(source.out, topic);
  const producerPlan = unwrap(compile(p));
  const c = consumer(topic, maxByteSpan);
  const pub = unwrap(RunSession.create(producerPlan, { backend, boundaries: await IpcBoundaries.prepare(producerPlan, { backend, runtimeDirectory: dir, awaitSubscribers: 1 }) }));
  const sub = unwrap(RunSession.create(c.plan, { backend, boundaries: await IpcBoundaries.prepare(c.plan, { backend, runtimeDirectory: dir }) }));
  const [produced, consumed] = await Promise.allSettled([pub.run({ drainTimeoutMs: 5000 }), sub.run()]);
  pub.dispose();
  sub.dispose();
  return { produced, consumed, plan: c.plan, sink: c.sink };
}

// Spec: "Derive slot bytes from deployment parameters" — inputMaxByteSpan of an input fed by an
// imported external topic uses the topic's bound.
describe.skipIf(!available.available)("inputMaxByteSpan of a subscribed input: the topic's declared bound", () => {
  it('sizes a derived pool from the bound and carries every frame through it, values exact', async () => {
    const { produced, consumed, plan, sink } = await run('bounded', 30, VALUES * 4);
    expect(plan.pool('pool:half.half')).toMatchObject({ maxByteSpan: VALUES * 2, byteSpanSource: 'derived' });
    expect(plan.topic('bounded')[0]?.maxByteSpan).toBe(VALUES * 4);
    expect([produced.status, consumed.status]).toEqual(['fulfilled', 'fulfilled']);
    expect(sink.received).toBe(30);
    expect(sink.wrong).toBe(0);
  });

  it('fails the consumer run with ProtocolError when the publisher sends more bytes than the declared bound', async () => {
    const { consumed, sink } = await run('overbound', 5, VALUES * 2);
    expect(consumed).toMatchObject({
      status: 'rejected',
      reason: {
        code: ErrorCode.ProtocolError,
        message: expect.stringContaining(`the publisher sent a tensor of ${VALUES * 4} bytes but subscribe() bounds input half.values to ${VALUES * 2} bytes`),
      },
    });
    expect(sink.received).toBe(0);
  });
});
