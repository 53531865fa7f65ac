import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ExecutionContext, Graph, type InputPort, Operator, type OperatorSpec, compile } from '@hs/compiler';
import { RunSession } from '@hs/runtime';
import { Device, HostBackend, MemoryKind, OK_VOID, type Result, unwrap } from '@hs/streams';
import { DType } from '@hs/tensor';
import { afterAll, describe, expect, it } from 'vitest';
import { IpcBoundaries, ipcAvailability } from '../src/index.js';
import { CountingSource, VALUES } from './fixtures/counting-source.js';

// A published host output that is also read in the producing process by an operator on a CUDA stream:
// that consumer registers its stream for release on the boundary pool like on any local pool, and the
// slot returns to the pool only after its stream passed the release event (and every subscriber released it).

const available = ipcAvailability();
if (!available.available) console.log(`local stream consumer tests skipped: ${available.reason}`);
const dir = mkdtempSync(join(tmpdir(), 'hs-local-stream-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));


/** Reads each frame on its own CUDA stream (a device copy of the host slot), checking the values. */
class StreamReader extends Operator {
  in!: InputPort;
  received = 0;
  wrong = 0;
  private readonly host = new Int32Array(VALUES);
  constructor(name: string) {
    super(name);
  }
  setup(spec: OperatorSpec): void {
    this.in = spec.input('values', { memoryKind: MemoryKind.Host, dtype: DType.int32, rank: 1 });
    spec.requireCudaStream();
  }
  async compute(ctx: ExecutionContext): Promise<Result<void>> {
    const tensor = ctx.receive(this.in)!;
    await tensor.copyToHost(new Uint8Array(this.host.buffer), ctx.cudaStream());
    for (let k = 0; k < VALUES; k++) if (this.host[k] !== this.received * 1000 + k) this.wrong += 1;
    this.received += 1;
    return OK_VOID;
  }
}

/** Host reader in the other session. */
class HostReader extends Operator {
  in!: InputPort;
  received = 0;
  constructor() {
    super('remote');
  }
  setup(spec: OperatorSpec): void {
    this.in = spec.input('values', { memoryKind: MemoryKind.Host, dtype: DType.int32, rank: 1 });
  }
  compute(ctx: ExecutionContext): Result<void> {
    ctx.receive(this.in);
    this.received += 1;
    return OK_VOID;
  }
}

describe.skipIf(!available.available)('a published host output with local consumers on CUDA streams', () => {
  it('local stream consumers register release streams on the boundary pool; every frame reaches them and the subscriber; every slot comes back', async () => {
    const backend = new HostBackend({ deviceCount: 1, orderingChecker: true });
    const graph = new Graph('publish-and-read');
    const source = graph.add(new CountingSource(200));
    const readers = [graph.add(new StreamReader('gpu0')), graph.add(new StreamReader('gpu1'))];
    for (const reader of readers) graph.addFlow(source.out, reader.in);
    graph.publish(source.out, 'local-streams');
    const plan = unwrap(compile(graph, { deployment: { bindOperatorDevice: { gpu0: Device.cuda(0), gpu1: Device.cuda(0) } } }));
    const record = plan.pool('pool:source.values')!;
    expect(record.boundary).toMatchObject({ transport: 'posixShm', staging: 'direct' });
    expect(record.releaseStreamCap.domain).toBe('cuda:0');
    const consumerGraph = new Graph('remote-reader');
    const remote = consumerGraph.add(new HostReader());
    consumerGraph.subscribe('local-streams', remote.in);
    const consumerPlan = unwrap(compile(consumerGraph));
    const pub = unwrap(RunSession.create(plan, { backend, boundaries: await IpcBoundaries.prepare(plan, { backend, runtimeDirectory: dir, awaitSubscribers: 1 }) }));
    const sub = unwrap(RunSession.create(consumerPlan, { backend, boundaries: await IpcBoundaries.prepare(consumerPlan, { backend, runtimeDirectory: dir }) }));
    const [produced] = await Promise.all([pub.run(), sub.run()]);
    for (const reader of readers) expect({ received: reader.received, wrong: reader.wrong }).toEqual({ received: 200, wrong: 0 });
    expect(remote.received).toBe(200);
    expect(produced.pools).toEqual([expect.objectContaining({ id: 'pool:source.values', outstanding: 0 })]);
    expect(backend.orderingChecker?.violations).toEqual([]);
    pub.dispose();
    sub.dispose();
  });
});
