import type { EdgeDropPolicy } from '@hs/compiler';
import { TensorPool } from '@hs/pool';
import { Device, ErrorCode, HostBackend, MemoryKind, OK_VOID, type Result, err, unwrap } from '@hs/streams';
import { DType, type Tensor } from '@hs/tensor';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { BoundaryPublication } from '../src/boundary-provider.js';
import { Channel } from '../src/channel.js';
import type { InputRequirement } from '../src/input-binding.js';
import { ActivationLoans, OutputBinding, type OutputPublication } from '../src/output-binding.js';

const FRAME = 64;
const ANY: InputRequirement = { memoryKind: null, dtype: null, rank: null };
const disposers: (() => void)[] = [];
afterEach(() => {
  for (const dispose of disposers.splice(0)) dispose();
});

/** A producer stream and pool on a manually stepped host backend (ordering checker on). */
function rig(slotCount = 2) {
  const backend = new HostBackend({ scheduling: 'manual', seed: 13, orderingChecker: true });
  const producer = unwrap(backend.createStream(Device.cuda(0), { label: 'producer' }));
  const makePool = (name: string) =>
    unwrap(
      TensorPool.materialize(backend, {
        name,
        memoryKind: MemoryKind.CudaDevice,
        device: Device.cuda(0),
        slotCount,
        slotByteSpan: FRAME,
        maxRank: 1,
        producerStream: producer,
      }),
    );
  const pool = makePool('frames');
  const loans = new ActivationLoans();
  const output = (
    channels: Channel[],
    options: { pool?: TensorPool | null; fused?: boolean; requirements?: InputRequirement[]; publication?: OutputPublication } = {},
  ) =>
    new OutputBinding('source', producer, {
      name: 'frames',
      channels,
      consumerRequirements: options.requirements ?? channels.map(() => ANY),
      pool: options.pool === undefined ? pool : options.pool,
      fused: options.fused ?? false,
      publication: options.publication ?? null,
    });
  /** Allocates through `binding`, fills and commits on the producer stream. */
  const committed = (binding: OutputBinding, value = 1) => {
    const loan = unwrap(binding.allocate({ shape: [FRAME], dtype: DType.uint8 }, loans));
    const guard = unwrap(loan.write(producer));
    unwrap(backend.memsetAsync(producer, guard.range, value));
    unwrap(guard.commit());
    return loan;
  };
  disposers.push(() => {
    pool.dispose();
    backend.dispose();
  });
  return { backend, producer, pool, makePool, loans, output, committed };
}

const edge = (id: string, depth = 2, policy: EdgeDropPolicy = 'block') => new Channel(id, depth, depth, policy);

describe('OutputBinding (the producer half of the stream contract)', () => {
  it('allocates through the output pool into the activation loans; a pass-through output has no pool', () => {
    const { pool, loans, output } = rig(1);
    const binding = output([edge('a')]);
    const loan = unwrap(binding.allocate({ shape: [FRAME], dtype: DType.uint8 }, loans));
    expect(loans.indexOf(loan)).toBe(0);
    expect(pool.available).toBe(0);
    const exhausted = binding.allocate({ shape: [FRAME], dtype: DType.uint8 }, loans);
    expect(exhausted.ok).toBe(false);
    if (!exhausted.ok) expect(exhausted.error.code).toBe(ErrorCode.ResourceExhausted);
    loans.abandonAll();
    expect(loans.indexOf(loan)).toBe(-1);
    expect(pool.available).toBe(1);

    const passThrough = output([edge('b')], { pool: null }).allocate({ shape: [FRAME], dtype: DType.uint8 }, loans);
    expect(passThrough.ok).toBe(false);
    if (!passThrough.ok) {
      expect(passThrough.error.code).toBe(ErrorCode.NotSupported);
      expect(passThrough.error.message).toContain('output source.frames has no runtime pool');
    }
  });

  it('defers the readiness record on a fused output only', () => {
    const { backend, loans, output, committed } = rig();
    const record = vi.spyOn(backend, 'recordEvent');
    const fused = committed(output([edge('a')], { fused: true }));
    expect(record).not.toHaveBeenCalled();
    expect(unwrap(fused.emit()).readinessDeferred).toBe(true);
    const fenced = committed(output([edge('b')]));
    expect(record).toHaveBeenCalledTimes(1);
    expect(unwrap(fenced.emit()).readinessDeferred).toBe(false);
    loans.abandonAll();
  });

  it('emits with one read lease per edge: the slot is recycled only after every edge released its entry', () => {
    const { backend, pool, loans, output, committed } = rig();
    const edges = [edge('a'), edge('b'), edge('c')];
    const binding = output(edges);
    const loan = committed(binding);
    expect(binding.emit(loan, loans)).toBe(OK_VOID);
    expect(loans.indexOf(loan)).toBe(-1);
    const tensors = edges.map((e) => e.shift()!);
    expect(new Set(tensors).size).toBe(1);
    backend.runUntilIdle();
    for (const [i, tensor] of tensors.entries()) {
      expect(pool.retire()).toBe(0);
      tensor.backing!.releaseLease(null);
      if (i < tensors.length - 1) expect(pool.available).toBe(1);
    }
    expect(pool.retire()).toBe(1);
    expect(pool.available).toBe(2);
    // The loan left the activation: emitting it again is refused as foreign, naming the output.
    const again = binding.emit(loan, loans);
    expect(again.ok).toBe(false);
    if (!again.ok) {
      expect(again.error.code).toBe(ErrorCode.InvalidState);
      expect(again.error.message).toContain('output source.frames: this loan was already emitted');
    }
  });

  it('refuses an emit as a whole when a block edge is full: nothing published, counted on the edge, one shared result', () => {
    const { loans, output, committed } = rig(4);
    const full = edge('full', 1);
    const open = edge('open', 2);
    const binding = output([open, full]);
    expect(binding.emit(committed(binding), loans)).toBe(OK_VOID);
    open.shift()!.backing!.releaseLease(null);
    expect(binding.canPublish()).toBe(false);
    const loan = committed(binding);
    const first = binding.emit(loan, loans);
    const second = binding.emit(loan, loans);
    expect(first.ok).toBe(false);
    if (!first.ok) expect(first.error.code).toBe(ErrorCode.Backpressured);
    expect(second).toBe(first);
    expect(open.length).toBe(0);
    expect(full.backpressured).toBe(2);
    expect(binding.refused(false)).toBe(true);
    expect(full.backpressured).toBe(2);
    // The loan is still the activation's: it can be retained, then offered back to a retry.
    expect(binding.retain(loan, loans)).toBe(OK_VOID);
    expect(loans.indexOf(loan)).toBe(-1);
    const twice = binding.retain(loan, loans);
    expect(twice.ok).toBe(false);
    if (!twice.ok) expect(twice.error.message).toContain('already holds a pending loan');
    expect(binding.offerPending(loans)).toBe(true);
    expect(binding.offerPending(loans)).toBe(false);
    expect(binding.offered).toBe(loan);
    full.shift()!.backing!.releaseLease(null);
    expect(binding.canPublish()).toBe(true);
    expect(binding.emit(loan, loans)).toBe(OK_VOID);
    expect(binding.offered).toBeUndefined();
    expect(open.length).toBe(1);
    expect(full.length).toBe(1);
  });

  it('applies the drop policy of a full non-blocking edge and gives the dropped entry its lease back; a closed edge takes nothing', () => {
    const { pool, loans, output, committed } = rig(3);
    const oldest = edge('oldest', 1, 'dropOldest');
    const closed = edge('closed', 1);
    closed.closed = true;
    const binding = output([oldest, closed]);
    expect(binding.canPublish()).toBe(true);
    expect(binding.emit(committed(binding, 1), loans)).toBe(OK_VOID);
    expect(binding.emit(committed(binding, 2), loans)).toBe(OK_VOID);
    expect(oldest.dropped).toBe(1);
    expect(closed.length).toBe(0);
    // The first frame was evicted unread: its slot is free again without any release stream.
    expect(pool.retire()).toBe(1);
    oldest.shift()!.backing!.releaseLease(null);
    expect(pool.retire()).toBe(1);
    expect(pool.available).toBe(3);
  });

  it('checks a pass-through tensor against every consumer requirement and refuses emitTensor on a pool output', () => {
    const { loans, makePool, output, committed } = rig();
    const foreign = makePool('caller-owned');
    disposers.unshift(() => foreign.dispose());
    const lender = output([], { pool: foreign });
    const tensor = unwrap(committed(lender).emit());
    const requirements: InputRequirement[] = [ANY, { memoryKind: null, dtype: DType.float32, rank: null }];
    const passThrough = output([edge('a'), edge('b')], { pool: null, requirements });
    const mismatch = passThrough.emitTensor(tensor);
    expect(mismatch.ok).toBe(false);
    if (!mismatch.ok) {
      expect(mismatch.error.code).toBe(ErrorCode.ProtocolError);
      expect(mismatch.error.message).toContain('has dtype uint8 but a consumer requires float32');
    }
    const fits = output([edge('c')], { pool: null });
    expect(fits.emitTensor(tensor)).toBe(OK_VOID);
    const onPool = output([edge('d')]).emitTensor(tensor);
    expect(onPool.ok).toBe(false);
    if (!onPool.ok) expect(onPool.error.code).toBe(ErrorCode.NotSupported);
    loans.abandonAll();
  });

  it('hands a published tensor to its topic: as it is for a direct boundary, copied on the producer stream when staged', () => {
    const { producer, pool, loans, output, committed } = rig(4);
    const sent: [string, Tensor, unknown][] = [];
    const boundary = (failure: Result<void> = OK_VOID) =>
      ({
        pool,
        publish: (tensor: Tensor) => (sent.push(['publish', tensor, undefined]), failure),
        publishCopy: (tensor: Tensor, stream: unknown) => (sent.push(['publishCopy', tensor, stream]), failure),
      }) as unknown as BoundaryPublication;
    const direct = output([edge('a', 4)], { publication: { boundary: boundary(), staged: false } });
    expect(direct.emit(committed(direct), loans)).toBe(OK_VOID);
    const staged = output([], { publication: { boundary: boundary(), staged: true } });
    expect(staged.emit(committed(staged), loans)).toBe(OK_VOID);
    expect(sent.map(([how, , stream]) => [how, stream])).toEqual([
      ['publish', undefined],
      ['publishCopy', producer],
    ]);
    const failing = output([], { publication: { boundary: boundary(err(ErrorCode.ProtocolError, 'subscriber gone')), staged: false } });
    const failed = failing.emit(committed(failing), loans);
    expect(failed.ok).toBe(false);
    if (!failed.ok) expect(failed.error.message).toContain('output source.frames: topic');
  });
});
