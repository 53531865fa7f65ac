import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ExecutionContext, Graph, Operator, type OperatorSpec, type OutputPort, compile } from '@hs/compiler';
import { RunSession } from '@hs/runtime';
import { ErrorCode, HostBackend, MemoryKind, OK_VOID, type Result, unwrap } from '@hs/streams';
import { DType } from '@hs/tensor';
import { afterAll, describe, expect, it } from 'vitest';
import { IpcBoundaries, TopicPublisher, ipcAvailability } from '../src/index.js';

const available = ipcAvailability();
if (!available.available) console.log(`exact-rank boundary tests skipped: ${available.reason}`);
const dir = mkdtempSync(join(tmpdir(), 'hs-topic-rank-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A published rank-2 output (maxRank 3) that tries a rank-1, then a rank-3, then a rank-2 allocation of its boundary pool. */
class ImageSource extends Operator {
  out!: OutputPort;
  readonly refusals: Result<unknown>[] = [];
  setup(spec: OperatorSpec): void {
    this.out = spec.output('image').producesTensor({
      representation: { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 2 },
      bounds: { maxByteSpan: 64, maxRank: 3 },
      storage: 'runtimePool',
    });
  }
  compute(ctx: ExecutionContext): Result<void> {
    for (const shape of [[64], [2, 4, 8]]) {
      const refused = ctx.allocateTensor(this.out, { shape, dtype: DType.uint8 });
      if (refused.ok) return ctx.emit(this.out, refused.value);
      this.refusals.push(refused);
    }
    const loan = unwrap(ctx.allocateTensor(this.out, { shape: [8, 8], dtype: DType.uint8 }));
    unwrap(unwrap(loan.write(null)).commit());
    unwrap(ctx.emit(this.out, loan));
    ctx.finish();
    return OK_VOID;
  }
}

// Spec: "Derive slot bytes from deployment parameters" — the representation rank is exact, on a process
// boundary's pool as on a runtime pool.
describe.skipIf(!available.available)("exact rank on a published output's boundary pool", () => {
  it('the boundary pool refuses ranks 1 and 3 for a rank-2 output (maxRank 3) with InvalidArgument, and takes rank 2', async () => {
    const backend = new HostBackend();
    const graph = new Graph('rank-producer');
    const source = graph.add(new ImageSource('source'));
    graph.publish(source.out, 'exact-rank-topic');
    const plan = unwrap(compile(graph));
    const record = plan.tensorAllocations().find((p) => p.boundary !== null)!;
    expect([record.rank, record.maxRank]).toEqual([2, 3]);
    const session = unwrap(RunSession.create(plan, { backend, boundaries: await IpcBoundaries.prepare(plan, { backend, runtimeDirectory: dir }) }));
    const metrics = await session.run();
    session.dispose();
    backend.dispose();
    expect(metrics.frames).toBe(1);
    expect(source.refusals.map((r) => (r.ok ? 'ok' : r.error.code))).toEqual([ErrorCode.InvalidArgument, ErrorCode.InvalidArgument]);
    expect(source.refusals.map((r) => (r.ok ? '' : r.error.message))).toEqual([
      expect.stringContaining('shape has rank 1, but the output is declared with rank 2'),
      expect.stringContaining('shape has rank 3, but the output is declared with rank 2'),
    ]);
  });

  it('TopicPublisher.create refuses a rank above maxRank, naming both', async () => {
    const backend = new HostBackend();
    await expect(
      TopicPublisher.create({ backend, topic: 'bad-rank', memoryKind: MemoryKind.Host, slotCount: 2, slotByteSpan: 64, maxRank: 2, rank: 3, runtimeDirectory: dir }),
    ).rejects.toThrow('TopicPublisher: rank must be an integer in 0..maxRank (2), got 3');
    backend.dispose();
  });
});
